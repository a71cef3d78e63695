"""Diagrams of the splits, drawn from the same ``lib`` objects the chapters compute with.

Introduced in the introduction (the ways to split) and used by chapters 6
(a block under tensor parallelism), 8 (pipeline stages), 9 (experts, and the
device map of a layout) and the planner page. Every diagram is a pair: a
``*_data`` function that returns plain data (JSON as it is, with an
``"alt"`` description) and a function that draws exactly that data and
returns a matplotlib figure, at most 8 in wide with no text under 9 pt.
:func:`alt_text` gives a figure's description and :func:`diagram_data` its
data, so captions and alt text come from the numbers that are drawn.

* :func:`tensor_parallel_block` (:func:`tp_block_data`): heads, columns and rows per GPU, the two all-reduces;
* :func:`pipeline_stages` (:func:`pipeline_data`): layers per stage, embedding and head, the hops;
* :func:`experts_over_devices` (:func:`experts_data`): whole experts or slices of all, one token's top-k;
* :func:`device_map` (:func:`device_map_data`): which GPU holds what for any layout on a cluster, and the
  link and kernel of every collective;
* :func:`three_splits` (:func:`three_splits_data`): tensor, pipeline, replicas and experts on two GPUs;
* :func:`sequence_parallel_block`, :func:`data_parallel_replicas`, :func:`expert_dispatch` and
  :func:`disaggregated_pools` (:mod:`lib.diagrams.splits`): sequence parallelism, replicas behind a router, the
  dispatch and combine of expert parallelism, and the prefill and decode pools. :data:`SPLIT_FIGURES` names, for
  every split, the chapter and the glued figure that draw it.

>>> from lib.transformer import PRESETS
>>> from lib.serving import Cluster, Layout
>>> m = device_map_data(PRESETS["llama-3-70b"], Layout(tp=2, pp=2, dp=2), Cluster("h100-sxm"))
>>> [(g["gpu"], g["stage"], g["replica"]) for g in m["gpus"] if g["tp_rank"] == 0]
[(0, 0, 0), (2, 1, 0), (4, 0, 1), (6, 1, 1)]
"""

from lib.diagrams._draw import MAX_WIDTH, MIN_FONT, alt_text, diagram_data
from lib.diagrams.data import (
    DEVICE_MAP_VERSION,
    device_map_data,
    experts_data,
    listing,
    pipeline_data,
    shard,
    span,
    tp_block_data,
)
from lib.diagrams.device_map import device_map, grid_columns
from lib.diagrams.figures import experts_over_devices, pipeline_stages, shown, tensor_parallel_block
from lib.diagrams.intro import three_splits, three_splits_data
from lib.diagrams.splits import (
    SPLIT_FIGURES,
    data_parallel_replicas,
    disaggregated_data,
    disaggregated_pools,
    dispatch_data,
    expert_dispatch,
    replicas_data,
    sequence_parallel_block,
    sequence_parallel_data,
)

__all__ = [
    "MAX_WIDTH",
    "MIN_FONT",
    "alt_text",
    "diagram_data",
    "DEVICE_MAP_VERSION",
    "listing",
    "shard",
    "span",
    "tp_block_data",
    "pipeline_data",
    "experts_data",
    "device_map_data",
    "tensor_parallel_block",
    "pipeline_stages",
    "experts_over_devices",
    "shown",
    "device_map",
    "grid_columns",
    "three_splits",
    "three_splits_data",
    "SPLIT_FIGURES",
    "sequence_parallel_data",
    "sequence_parallel_block",
    "replicas_data",
    "data_parallel_replicas",
    "dispatch_data",
    "expert_dispatch",
    "disaggregated_data",
    "disaggregated_pools",
]
