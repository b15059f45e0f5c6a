# Sourced by scripts/bench/run.sh and profile.sh: the PostgreSQL server
# settings docs/production.md recommends for this workload, for the cluster
# they start (scripts/start-postgres.sh reads PIXGATE_PG_SETTINGS). pgbench
# and pixgate run on the same cluster, so both ceilings and pixgate see the
# same settings. Set PG_SETTINGS to override ("" for PostgreSQL's defaults,
# which is what the first measurements used: 1 GB max_wal_size made a
# checkpoint start every ~35 s under payout load, each followed by a wave of
# full-page writes). min_wal_size keeps the WAL segments a checkpoint frees for
# reuse instead of deleting them: creating a new 16 MB segment (zero-filled,
# then fsynced) holds every commit behind it for 50–100 ms, which on a young
# cluster happened every ~2 s under load and made the half-peak p99 (see
# scripts/bench/halfpeak.sh and docs/decisions.md). Every autovacuum and
# autoanalyze is logged (WORKDIR/pg/pg.log), to tell whether one ran inside
# a half-peak row.
export PIXGATE_PG_SETTINGS=${PG_SETTINGS-"-c shared_buffers=2GB -c min_wal_size=4GB -c max_wal_size=8GB -c checkpoint_timeout=15min -c wal_compression=on -c log_autovacuum_min_duration=0"}
