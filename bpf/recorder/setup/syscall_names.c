// SPDX-License-Identifier: GPL-2.0
#include "setup/syscall_names.h"

const char *const syscall_names[REC_NR_SYSCALLS] = {
	"write", "pwrite64", "pwritev", "pwritev2", "io_submit", "io_uring_enter",
	"fsync", "fdatasync", "sync_file_range", "read", "recvfrom", "recvmsg", "sendto", "sendmsg",
};

const char *syscall_names_kind(int i)
{
	return i < REC_SYNC_FIRST ? "write" : i < REC_SYNC_RANGE ? "sync" :
	       i < REC_TIMED_SYSCALLS ? "sync_range" : i < REC_TX_FIRST ? "received" : "sent";
}
