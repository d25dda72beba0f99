/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_streams.h - the stream table of the receive engine: hosts, sources and streams, their
 * quotas, and the lookup every frame goes through (layer 1). */
#ifndef RDPS_PROTO_RX_STREAMS_H
#define RDPS_PROTO_RX_STREAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_rx_track.h"
#include "rdps_rx_types.h"
#include "rdps_source.h"

/*
 * Model
 * -----
 * Every received byte is hostile: anyone in the group can send any header
 * from any source it can forge, so every entry is keyed by the exact
 * sender (struct rdps_source: GID, QPN, LID, compared in full) and bounded
 * globally and per host.
 *
 * A source is one sender QP; a host is every source with the same GID (or
 * LID without a GRH): the QPN is the sender's choice, so one machine can be
 * any number of sources but only one host. One entry per source and per
 * host that has a stream, at most max_sessions of each; O(1) lookup by
 * seeded hashes (hash_seed: random per process).
 *
 * A stream is one publisher session seen from one source: key (source,
 * session_id), a table of max_sessions entries, open addressing with linear
 * probing and backward-shift deletion, and an LRU list of activity. A
 * stream record carries what the frames of its stream are checked against
 * (identity, accepted topic, the predicted next header), its mode, the
 * metadata of its single-datagram messages, and its sequence tracker
 * (rdps_rx_track.h) with its range storage (max_gap_ranges per stream).
 *
 * Quotas. A host counts its streams against max_streams_per_host; a new
 * stream whose host is at it displaces the least recently active stream of
 * the host's heaviest source (sessions_source_quota), and one that finds
 * the table full the least recently active stream of the heaviest source
 * of the host holding the most streams (sessions_evicted): so a host over
 * its quota only hurts itself, its heaviest QP first. The table only
 * chooses (rdps__rx_streams_victim); the caller takes the victim out of the
 * layers below, then removes it. Idle streams (idle_timeout_ns) are chosen
 * the same way (rdps__rx_streams_idle).
 *
 * The parking share of a stream (what a reliable stream may hold in the
 * assembly layer's quotas, rdps_rx_assembly.h) is its host's quotas divided
 * among the host's streams: kept per host, recomputed when a host's stream
 * count changes, never per frame.
 *
 * Allocates everything at init; no clock (now_ns is passed), no callback.
 */

struct rdps_rx_streams_config {
    uint32_t max_sessions;         /* streams, and so sources and hosts (>= 1) */
    uint32_t max_streams_per_host; /* 0 = max_sessions */
    uint32_t max_gap_ranges;       /* range storage per stream (1..1024) */
    uint32_t park_per_host;        /* the host quotas the parking share divides: partial slots */
    uint32_t chunks_per_host;      /* ... and arena chunks */
    uint64_t idle_timeout_ns;      /* forget streams idle this long; 0 = never */
    uint64_t hash_seed;
    struct rdps_reasm_counters *counters; /* sessions_* */
};

/* A host: the sources sharing a GID (or a LID without a GRH). */
struct rdps_rx_host {
    struct rdps_source id; /* rdps__source_host(): the QPN is 0 */
    uint32_t streams;
    uint32_t park_share, chunk_share; /* the host quotas divided by its streams */
    int32_t hash_next;                /* bucket chain; also the free-list link */
    int32_t src_head;                 /* its sources, linked through rdps_rx_source.host_next */
};

/* A source (one QP of a host). */
struct rdps_rx_source {
    struct rdps_source id;
    uint32_t streams;
    int32_t host;
    int32_t hash_next;            /* bucket chain; also the free-list link */
    int32_t host_prev, host_next; /* the host's sources */
};

struct rdps_rx_stream {
    struct rdps_rx_ident id;
    uint64_t topic_ok; /* id.topic_id if accepted, else 0 (never a valid topic): one compare */
    /* Header prediction: bytes 0-7 of its next single-datagram frame (0 = never predicted). */
    uint64_t predict_w0;
    uint64_t last_active_ns;
    /* Unreliable: the message ordinal after its newest datagram (where a gap opened by the next
     * one starts); reliable: kept by rdps_rel_recv.c. */
    uint32_t ord_next;
    bool reliable;    /* handled by the reliable path (rdps_rel_recv.h) */
    bool from_oldest; /* reliable: late join from the publisher's oldest retained sequence */
    int32_t src, host;
    int32_t lru_prev, lru_next; /* also the free-list link (lru_next) */
    /* Metadata of its single-datagram messages: the stream's part filled once, at creation. */
    struct rdps_reasm_msg_info single;
    struct rdps_rx_track track;
};

struct rdps_rx_streams {
    struct rdps_rx_streams_config cfg;
    struct rdps_rx_stream *streams;
    int32_t *hash_slots; /* stream index or -1 */
    uint32_t hash_mask;
    int32_t stream_free, lru_head, lru_tail; /* lru_head = most recently active */
    struct rdps_rx_source *sources;
    int32_t *src_buckets; /* source index or -1; chained through hash_next */
    uint32_t src_mask;
    int32_t src_free;
    struct rdps_rx_host *hosts;
    int32_t *host_buckets;
    int32_t host_free;
    uint32_t host_max_streams;
    struct rdps_gap_range *gap_store; /* max_sessions x max_gap_ranges */
};

/* Returns 0, RDPS_EINVAL (bad sizes), RDPS_ENOMEM. */
int rdps__rx_streams_init(struct rdps_rx_streams *t, const struct rdps_rx_streams_config *cfg);
void rdps__rx_streams_fini(struct rdps_rx_streams *t);

/* The stream for (source, session), NO stream: RDPS_RX_NONE. Marks it active (LRU, now_ns). */
int32_t rdps__rx_streams_find_slow(struct rdps_rx_streams *t, const struct rdps_source *source,
                                   uint32_t session_id, uint64_t now_ns);
static inline int32_t rdps__rx_streams_find(struct rdps_rx_streams *t,
                                            const struct rdps_source *source, uint32_t session_id,
                                            uint64_t now_ns)
{
    /* Consecutive frames usually come from the same stream: skip the hash then. */
    int32_t si = t->lru_head;
    if (si != RDPS_RX_NONE && t->streams[si].id.session_id == session_id &&
        rdps__source_equal(&t->streams[si].id.source, source)) {
        t->streams[si].last_active_ns = now_ns;
        return si;
    }
    return rdps__rx_streams_find_slow(t, source, session_id, now_ns);
}
/* The same without marking it active. */
int32_t rdps__rx_streams_lookup(const struct rdps_rx_streams *t, const struct rdps_source *source,
                                uint32_t session_id);

/*
 * Before a new stream of `source` is created: the stream that must make room for it (its host
 * at its quota, or the table full; counted), RDPS_RX_NONE when there is room. The caller takes
 * the victim out of the other layers, then calls rdps__rx_streams_remove.
 */
int32_t rdps__rx_streams_victim(struct rdps_rx_streams *t, const struct rdps_source *source);
/*
 * A new stream for a frame with header h (there is room: rdps__rx_streams_victim said so or its
 * victim was removed): identity, LRU, counts, tracker started at h->seq. topic_ok and the
 * prediction are set only when `accepted`; mode from `reliable` and `from_oldest`.
 */
int32_t rdps__rx_streams_create(struct rdps_rx_streams *t, const struct rdps_source *source,
                                const struct rdps_frame_header *h, bool accepted, bool reliable,
                                bool from_oldest, uint64_t now_ns);
void rdps__rx_streams_remove(struct rdps_rx_streams *t, int32_t si);

/* With idle_timeout_ns: the least recently active stream if it has been idle that long
 * (counted sessions_expired; the caller removes it as above), else RDPS_RX_NONE and *next is
 * lowered to when the next one will be. */
int32_t rdps__rx_streams_idle(struct rdps_rx_streams *t, uint64_t now_ns, uint64_t *next);

/* The stream's parking share: its host's quotas of partial slots and chunks per stream. */
static inline void rdps__rx_streams_share(const struct rdps_rx_streams *t, int32_t si,
                                          uint32_t *park, uint32_t *chunks)
{
    const struct rdps_rx_host *h = &t->hosts[t->streams[si].host];
    *park = h->park_share;
    *chunks = h->chunk_share;
}

uint32_t rdps__rx_streams_count(const struct rdps_rx_streams *t);
uint32_t rdps__rx_streams_source_count(const struct rdps_rx_streams *t);
uint32_t rdps__rx_streams_host_count(const struct rdps_rx_streams *t);

#endif /* RDPS_PROTO_RX_STREAMS_H */
