"""What a sweep's options offer and default to: --fs, --scenario, --throughput, --preset,
--db-scale, --span and --block-size. The command line's parser shows them and the sweep
acts on them; they are kept here, importing nothing, because every start of lockscope
builds that parser."""

# ext2/ext3 are for the journal's share beside ext4 (loop images or --target)
SUPPORTED_FS = ("ext4", "xfs", "ext2", "ext3")

DEFAULT_SCENARIO = "shared-sparse-randwrite"  # one of run.scenarios.SCENARIOS

# the tools whose report run.workload.parsers reads (its PARSERS)
THROUGHPUT_TOOLS = ("dd", "fio", "pgbench", "sysbench")

# --preset: what each runs (how: run.dbserver.presets)
PRESET_DESCRIPTIONS = {
    "mariadb-oltp": "MariaDB under sysbench oltp_write_only (InnoDB, O_DIRECT, binary log, "
                    "durable commits), one client connection per thread",
    "postgres-pgbench": "PostgreSQL under pgbench's TPC-B-like transactions, one client "
                        "connection per thread",
}
DEFAULT_DB_SCALE = 10

# --per-thread: the region the writers split, and the unit of its fields
DEFAULT_SPAN = "1g"
DEFAULT_BLOCK = "64k"
