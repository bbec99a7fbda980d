// SPDX-License-Identifier: GPL-2.0
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "setup/privileges.h"

bool privileges_effective(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}
