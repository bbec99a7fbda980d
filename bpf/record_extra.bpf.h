/* SPDX-License-Identifier: GPL-2.0 */
/* Optional extras on function entry (fentry, else kprobe): never needed,
 * used where the kernel allows them. From ext4_file_write_iter's entry to
 * iomap_dio_rw_begin is the time a direct write spends taking i_rwsem and
 * in the checks before the I/O (fs/ext4/file.c, ext4_dio_write_iter and
 * ext4_dio_write_checks, inlined into ext4_file_write_iter). */
#ifndef LOCKSCOPE_RECORD_EXTRA_BPF_H
#define LOCKSCOPE_RECORD_EXTRA_BPF_H

static __always_inline void on_ext4_write_entry(void)
{
	struct task_val *t;

	if (!enabled || !traced_current())
		return;
	t = current_task();
	if (t)
		t->entry_ts = bpf_ktime_get_ns();
}

SEC("fentry/ext4_file_write_iter")
int BPF_PROG(ext4_write_entry_fentry)
{
	on_ext4_write_entry();
	return 0;
}

SEC("kprobe/ext4_file_write_iter")
int BPF_KPROBE(ext4_write_entry_kprobe)
{
	on_ext4_write_entry();
	return 0;
}

#endif
