"""Per-system runners started by bench/run, one process per system and workload."""
