"""The library behind *Twice the Devices, Half the Wait?*.

One module per topic; each names the chapter that introduces it. Inside the
library every quantity is in SI units (seconds, bytes, bytes per second);
write and read values with the constants of :mod:`lib.units`.
"""
