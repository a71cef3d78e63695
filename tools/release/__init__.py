"""What ships: the workshop bundles and the wheels for every laptop of an offline room."""
