/* SPDX-License-Identifier: BSD-2-Clause */
/* md_directory.h - the demo's symbol directory (schemas/md.proto SymbolDirectory) from and to plain
 * C arrays, validated both ways. */
#ifndef RDPS_MDUTIL_DIRECTORY_H
#define RDPS_MDUTIL_DIRECTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "md_packet.h"

/*
 * The directory tells a subscriber how to read the feed: which channels exist (each an rdps
 * topic with its own sequence and packet options) and which symbol, by ITCH stock locate,
 * travels on which channel. The feed sends it whole when a subscriber starts; it is the
 * only place the packet options (session, intended-times extension, longest message) are
 * agreed, so md_unpacker_config comes from it.
 *
 * A valid directory: 1..max channels, each of 0..channel_count-1 described exactly once
 * (topic 1..255 bytes, max_msg_len 1..65535); symbols with unique locates 1..65535, names of
 * 1..8 printable ASCII characters that neither start nor end with a space, and a channel
 * below channel_count. md_dir_encode refuses what md_dir_decode would refuse.
 */

#define MD_DIR_NAME_MAX  8
#define MD_DIR_TOPIC_MAX 255
#define MD_DIR_MAX_BYTES (4u << 20) /* longer encodings are refused before decoding */

struct md_dir_symbol {
    uint32_t locate;
    char name[MD_DIR_NAME_MAX + 1]; /* NUL-terminated, no padding */
    uint32_t channel;
};

struct md_dir_channel {
    uint32_t channel;
    char topic[MD_DIR_TOPIC_MAX + 1];
    char session[MD_SESSION_LEN]; /* MoldUDP64 session, not NUL-terminated */
    bool intended_times;
    uint32_t max_msg_len;
};

struct md_dir {
    uint32_t channel_count;
    struct md_dir_channel *channels;
    uint32_t n_channels;
    struct md_dir_symbol *symbols;
    uint32_t n_symbols;
};

/* 0, or -EINVAL with *why (may be NULL) saying which rule d breaks. */
int md_dir_check(const struct md_dir *d, const char **why);
/* A malloc'ed encoding in *out (free() it). 0, -EINVAL (md_dir_check), -ENOMEM. */
int md_dir_encode(const struct md_dir *d, uint8_t **out, size_t *len);
/*
 * Decodes into the caller's arrays d->channels (max_channels entries) and d->symbols
 * (max_symbols); sets the counts. 0; -EMSGSIZE (len above MD_DIR_MAX_BYTES), -EBADMSG (not a
 * SymbolDirectory), -ENOSPC (more than the arrays hold), -EINVAL (md_dir_check), with *why.
 */
int md_dir_decode(const uint8_t *buf, size_t len, struct md_dir *d, uint32_t max_channels,
                  uint32_t max_symbols, const char **why);

#endif /* RDPS_MDUTIL_DIRECTORY_H */
