/* SPDX-License-Identifier: GPL-2.0 */
/* ext4's journal: handles started per call site (jbd2_handle_start fires
 * once start_this_handle() succeeded, fs/jbd2/transaction.c), their
 * lifetimes (jbd2_handle_stats, at jbd2_journal_stop) and commit phases
 * (jbd2_run_stats, fs/jbd2/commit.c). Times are in jiffies. */
#ifndef LOCKSCOPE_RECORD_JBD2_BPF_H
#define LOCKSCOPE_RECORD_JBD2_BPF_H

static struct jbd2_handle_val zero_handle;
static struct jbd2_commit_val zero_commit;

static __always_inline struct jbd2_handle_val *handle_of(__u32 dev, __u32 type, __u32 line)
{
	struct jbd2_handle_key k = { .dev = dev, .type = type, .line_no = line };

	if (!enabled || !traced_current())
		return NULL;
	return lookup_or_init(&jbd2_handles, &k, &zero_handle, DROP_OTHER_FULL);
}

static __always_inline void on_handle_start(__u32 dev, __u32 type, __u32 line, int blocks)
{
	struct jbd2_handle_val *v = handle_of(dev, type, line);

	if (!v)
		return;
	__sync_fetch_and_add(&v->starts, 1);
	__sync_fetch_and_add(&v->requested_blocks, blocks);
}

static __always_inline void on_handle_stats(__u32 dev, __u32 type, __u32 line, int interval,
					    int sync, int dirtied)
{
	struct jbd2_handle_val *v = handle_of(dev, type, line);

	if (!v)
		return;
	__sync_fetch_and_add(&v->stats, 1);
	__sync_fetch_and_add(&v->interval_jiffies, interval);
	if (sync)
		__sync_fetch_and_add(&v->sync, 1);
	__sync_fetch_and_add(&v->dirtied_blocks, dirtied);
}

struct commit_args {
	__u64 wait, request_delay, running, locked, flushing, logging;
	__u64 handle_count, blocks, blocks_logged;
};

static __always_inline void on_run_stats(__u32 dev, struct commit_args *a)
{
	struct jbd2_commit_val *v;

	if (!enabled)
		return;
	v = lookup_or_init(&jbd2_commits, &dev, &zero_commit, DROP_OTHER_FULL);
	if (!v)
		return;
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->wait, a->wait);
	__sync_fetch_and_add(&v->request_delay, a->request_delay);
	__sync_fetch_and_add(&v->running, a->running);
	__sync_fetch_and_add(&v->locked, a->locked);
	__sync_fetch_and_add(&v->flushing, a->flushing);
	__sync_fetch_and_add(&v->logging, a->logging);
	__sync_fetch_and_add(&v->handle_count, a->handle_count);
	__sync_fetch_and_add(&v->blocks, a->blocks);
	__sync_fetch_and_add(&v->blocks_logged, a->blocks_logged);
	max_update(&v->max_locked, a->locked);
	max_update(&v->max_running, a->running);
}

static __always_inline void run_stats_ptr(__u32 dev, struct transaction_run_stats_s *rs,
					  const bool btf)
{
	struct commit_args a = {
		.wait = RD(rs, rs_wait),
		.request_delay = RD(rs, rs_request_delay),
		.running = RD(rs, rs_running),
		.locked = RD(rs, rs_locked),
		.flushing = RD(rs, rs_flushing),
		.logging = RD(rs, rs_logging),
		.handle_count = RD(rs, rs_handle_count),
		.blocks = RD(rs, rs_blocks),
		.blocks_logged = RD(rs, rs_blocks_logged),
	};

	on_run_stats(dev, &a);
}

TP_TWIN(jbd2_handle_start, jbd2_handle_start,
	on_handle_start(dev, type, line_no, requested_blocks),
	dev_t dev, tid_t tid, unsigned int type, unsigned int line_no, int requested_blocks)
TP_TWIN(jbd2_handle_stats, jbd2_handle_stats,
	on_handle_stats(dev, type, line_no, interval, sync, dirtied_blocks),
	dev_t dev, tid_t tid, unsigned int type, unsigned int line_no, int interval, int sync,
	int requested_blocks, int dirtied_blocks)
TP_TWIN(jbd2_run_stats, jbd2_run_stats, run_stats_ptr(dev, stats, btf),
	dev_t dev, tid_t tid, struct transaction_run_stats_s *stats)

SEC("tracepoint/jbd2/jbd2_handle_start")
int jbd2_handle_start_tp(struct trace_event_raw_jbd2_handle_start_class *ctx)
{
	on_handle_start(ctx->dev, ctx->type, ctx->line_no, ctx->requested_blocks);
	return 0;
}

SEC("tracepoint/jbd2/jbd2_handle_stats")
int jbd2_handle_stats_tp(struct trace_event_raw_jbd2_handle_stats *ctx)
{
	on_handle_stats(ctx->dev, ctx->type, ctx->line_no, ctx->interval, ctx->sync,
			ctx->dirtied_blocks);
	return 0;
}

SEC("tracepoint/jbd2/jbd2_run_stats")
int jbd2_run_stats_tp(struct trace_event_raw_jbd2_run_stats *ctx)
{
	struct commit_args a = {
		.wait = ctx->wait, .request_delay = ctx->request_delay, .running = ctx->running,
		.locked = ctx->locked, .flushing = ctx->flushing, .logging = ctx->logging,
		.handle_count = ctx->handle_count, .blocks = ctx->blocks,
		.blocks_logged = ctx->blocks_logged,
	};

	on_run_stats(ctx->dev, &a);
	return 0;
}

#endif
