/* zcfsctl kernel: which data paths the running kernel supports. */
#ifndef ZCFS_CTL_KERNEL_H
#define ZCFS_CTL_KERNEL_H

/* argv[0] is "kernel"; accepts --json. Exit status 0 whatever the
 * verdicts, 2 on a bad command line. */
int ctl_kernel(int argc, char **argv);

#endif
