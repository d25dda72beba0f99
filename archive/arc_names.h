/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_names.h - topic id to name, as a reader learns them from TOPIC records (bounded). */
#ifndef RDPS_ARCHIVE_NAMES_H
#define RDPS_ARCHIVE_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Names a reader keeps at most; a recording naming more leaves the rest unnamed (""). */
#define RDPS_ARC_NAMES_MAX (1u << 20)

struct arc_name {
    uint64_t id;
    char *name;
};

struct arc_names {
    struct arc_name *slots;
    size_t nslots, used;
};

void rdps__arc_names_init(struct arc_names *n);
void rdps__arc_names_fini(struct arc_names *n);
/* Records id's name (len bytes, not NUL-terminated); a later name for an id replaces it. */
void rdps__arc_names_put(struct arc_names *n, uint64_t id, const uint8_t *name, size_t len);
/* The name of id, or "" when unknown. */
const char *rdps__arc_names_get(const struct arc_names *n, uint64_t id);

#endif /* RDPS_ARCHIVE_NAMES_H */
