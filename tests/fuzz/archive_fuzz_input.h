/* SPDX-License-Identifier: BSD-2-Clause */
/* archive_fuzz_input.h - the input of fuzz_archive: a recording (one segment, its index and the
 * catalog) and the seeks to try, packed in one byte string (the seed generator writes it). */
#ifndef RDPS_TESTS_ARCHIVE_FUZZ_INPUT_H
#define RDPS_TESTS_ARCHIVE_FUZZ_INPUT_H

#include <stdint.h>

/*
 *   off size
 *    0   1   flags: bit 0 recompute every CRC before writing the files (so mutations reach the
 *            field checks behind them); bit 1 then recover the recording as a recorder
 *            opening the directory does, and read it again
 *    1   2   segment bytes S (le)
 *    3   2   index bytes I (le)
 *    5   2   catalog bytes C (le)
 *    7   8   a time to seek to (le)
 *   15   4   a session to seek to (le), its topic is "fz.a"
 *   19   4   a sequence (le)
 *   23   8   a record number (le)
 *   31   S   seg-00000000.rdpa of recording 1, then I bytes of its index, then C of catalog.rdpc
 */
#define FUZZ_ARCHIVE_HEAD 31

#endif /* RDPS_TESTS_ARCHIVE_FUZZ_INPUT_H */
