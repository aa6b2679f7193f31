/* The scratch directory of a fuzz target: made from its mkdtemp(3)
 * template by the first call, removed with everything in it at exit. */
#ifndef ZCFS_FUZZ_DIR_H
#define ZCFS_FUZZ_DIR_H

#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *fuzz_dir_path;

static int fuzz_dir_remove_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	(void)(flag == FTW_DP ? rmdir(p) : unlink(p));
	return 0;
}

static void fuzz_dir_remove(void)
{
	(void)nftw(fuzz_dir_path, fuzz_dir_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* true on the call that made it (aborts if it cannot), false after. */
static bool fuzz_dir_once(char *tmpl)
{
	if (fuzz_dir_path)
		return false;
	if (!mkdtemp(tmpl))
		abort();
	fuzz_dir_path = tmpl;
	atexit(fuzz_dir_remove);
	return true;
}

#endif
