/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_index.c - reading a segment's index file into validated, ordered entries. */
#include "arc_index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdps/rdps.h>

#include "arc_io.h"

void rdps__arc_index_free(struct arc_index *ix)
{
    free(ix->chunks);
    free(ix->sessions);
    memset(ix, 0, sizeof(*ix));
}

int rdps__arc_index_parse(const uint8_t *buf, size_t len, uint64_t id, uint32_t seg,
                          struct arc_index *ix)
{
    memset(ix, 0, sizeof(*ix));
    struct rdps_arc_file_header h;
    if (rdps__arc_file_header_decode(buf, len, RDPS_ARC_INDEX_MAGIC, &h) != RDPS_ARC_OK ||
        h.recording_id != id || h.segment != seg)
        return 0;
    size_t max = (len - RDPS_ARC_FILE_HEADER_LEN) / RDPS_ARC_INDEX_ENTRY_LEN;
    ix->chunks = malloc((max > 0 ? max : 1) * sizeof(*ix->chunks));
    ix->sessions = malloc((max > 0 ? max : 1) * sizeof(*ix->sessions));
    if (ix->chunks == NULL || ix->sessions == NULL) {
        rdps__arc_index_free(ix);
        return RDPS_ENOMEM;
    }
    size_t off = RDPS_ARC_FILE_HEADER_LEN;
    for (; off + RDPS_ARC_INDEX_ENTRY_LEN <= len; off += RDPS_ARC_INDEX_ENTRY_LEN) {
        struct rdps_arc_index_entry e;
        if (rdps__arc_index_decode(buf + off, len - off, &e) != RDPS_ARC_OK)
            break;
        if (e.type == RDPS_ARC_IX_CHUNK) {
            const struct rdps_arc_index_entry *prev =
                ix->nchunks > 0 ? &ix->chunks[ix->nchunks - 1] : NULL;
            uint64_t expect_off = prev != NULL ? prev->a + prev->b : RDPS_ARC_FILE_HEADER_LEN;
            if (e.a != expect_off ||
                (prev != NULL &&
                 (e.first_record != prev->first_record + prev->c || e.first_ts < prev->d)) ||
                (prev == NULL && e.first_record != h.first_record))
                break;
            ix->chunks[ix->nchunks++] = e;
        } else {
            /* A session entry follows the entry of the chunk (or an earlier chunk) it names. */
            if (ix->nchunks == 0 || e.d > ix->chunks[ix->nchunks - 1].a)
                break;
            ix->sessions[ix->nsessions++] = e;
        }
    }
    ix->complete = off == len;
    return 0;
}

int rdps__arc_index_load(const char *dir, uint64_t id, uint32_t seg, struct arc_index *ix)
{
    memset(ix, 0, sizeof(*ix));
    char path[RDPS_ARC_PATH_MAX];
    if (rdps__arc_segment_path(path, sizeof(path), dir, id, seg, RDPS_ARC_INDEX_EXT) != 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) == 0 && st.st_size >= RDPS_ARC_FILE_HEADER_LEN) {
        size_t len = (size_t)st.st_size;
        uint8_t *buf = malloc(len);
        if (buf == NULL) {
            rc = RDPS_ENOMEM;
        } else {
            ssize_t n = rdps__arc_pread_full(fd, buf, len, 0);
            if (n > 0)
                rc = rdps__arc_index_parse(buf, (size_t)n, id, seg, ix);
            free(buf);
        }
    }
    close(fd);
    return rc;
}
