/* The ring holder's confinement (zcfs-serve --ring-holder, docs/security.md):
 * its rings run only FUSE commands on its fixed file 0, and once they are
 * enabled the process itself may only sleep and exit. */
#include <errno.h>
#include <seccomp.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <liburing.h>
#include "sandbox.h"

int sandbox_restrict_holder_ring(int ring_fd)
{
	struct io_uring_restriction res[3];

	/* Only URING_CMD, only on a fixed file (the fuse fd is the only
	 * one), and no registration op at all: io_uring_register on the
	 * ring is refused from here on, a second restriction set included. */
	memset(res, 0, sizeof(res));
	res[0].opcode = IORING_RESTRICTION_SQE_OP;
	res[0].sqe_op = IORING_OP_URING_CMD;
	res[1].opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED;
	res[1].sqe_flags = IOSQE_FIXED_FILE;
	res[2].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[2].sqe_flags = IOSQE_FIXED_FILE;
	if (syscall(SYS_io_uring_register, ring_fd, IORING_REGISTER_RESTRICTIONS, res, 3) < 0 ||
	    syscall(SYS_io_uring_register, ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
		return -errno;
	return 0;
}

int sandbox_holder_seccomp(void)
{
	static const int allowed[] = {
		SCMP_SYS(pause), SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall),
		SCMP_SYS(exit), SCMP_SYS(exit_group),
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;

	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]) && r == 0; i++)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}
