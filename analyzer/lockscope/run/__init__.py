"""Running a sweep or an attach: the recorder, the workload, loop filesystems, servers,
targets and their cleanup. Reads and writes results.json through ``schema``; the
analysis and the report never import from here."""
