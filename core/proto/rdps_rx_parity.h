/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_parity.h - the receiver's block store for parity repairs: copies of a reliable stream's
 * datagrams and parity symbols per block, and the decode that rebuilds the missing ones. */
#ifndef RDPS_PROTO_RX_PARITY_H
#define RDPS_PROTO_RX_PARITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_fec.h"
#include "rdps_frame.h"
#include "rdps_rx_track.h"

/*
 * Model
 * -----
 * A publisher with parity repairs (rdps_rel_pub.h, Parity) tells its block size k in its
 * heartbeats; from then on the stream's datagrams are copied here as they arrive (from the
 * symbol offset on: what a parity symbol covers), one record per block, taken from a pool of
 * `blocks` records of k_max slots of slot_len bytes allocated at init (no allocation later).
 * A record knows every datagram of its block that arrived since it was opened, so the count
 * a parity NAK carries is exact: k less the datagrams and parity symbols held. A record
 * opened after some of its block's datagrams arrived (k learnt mid-block, or the record
 * evicted and opened again) is not `whole`: its block is asked for by sequence.
 *
 * Parity frames (PARITY) of a stream with a record of their block are kept while fewer than k
 * symbols are held; the first fixes the stream's symbol length (later ones of another length,
 * another k, or an index already held are counted drops). When a record holds k symbols it
 * decodes: the missing datagrams come back as whole DATA frames (rdps__frame_put_symbol_prefix)
 * for the caller to decode and feed as repairs. A rebuilt frame that does not decode, or whose
 * sequence is not the one it replaces, is a counted drop (a forged parity symbol).
 *
 * Records are freed when the stream's consumed point passes their block, when the stream
 * stops, and reused when the pool runs out: the stream's own oldest once it holds
 * blocks_per_stream, else the oldest record of all. Memory: blocks x k_max x slot_len bytes
 * (64 x 64 x 1040 = 4.1 MiB by default; a stream holds at most blocks_per_stream of them).
 */

struct rdps_rx_parity_config {
    uint32_t max_streams;       /* the receiver's stream table */
    uint32_t blocks;            /* records in the pool (0: parity off) */
    uint32_t blocks_per_stream; /* one stream holds at most this many (>= 1) */
    uint32_t k_max;             /* largest block accepted (a power of two <= RDPS_FEC_MAX_K) */
    uint32_t max_frame;         /* largest DATA frame kept (bytes; larger ones: no parity) */
};

struct rdps_rx_parity_counters {
    uint64_t frames_kept;     /* datagrams copied into a block record */
    uint64_t parity_received; /* parity frames of streams with parity */
    uint64_t parity_kept;     /* ... kept in a record */
    uint64_t parity_useless;  /* ... for a block already decodable or whole, or none open */
    uint64_t parity_bad;      /* ... of another k or length, index held, or block unknown */
    uint64_t decodes;         /* blocks decoded */
    uint64_t rebuilt;         /* datagrams rebuilt */
    uint64_t rebuilt_bad;     /* rebuilt datagrams that failed their checks (forged parity) */
    uint64_t records_evicted; /* records reused before their block was consumed */
};

struct rdps_rx_par_block {
    int32_t stream; /* owner, RDPS_RX_NONE (-1) when free */
    uint32_t start; /* the block's first sequence */
    bool whole;     /* every datagram of the block that arrived is here */
    uint32_t frames, parity;
    uint64_t stamp;                  /* opening order (oldest first for reuse) */
    uint8_t have[RDPS_FEC_MAX_K];    /* datagram i is held (slot i) */
    uint8_t pidx[RDPS_FEC_MAX_K];    /* slot of parity symbol p (in order of arrival) */
    uint32_t pindex[RDPS_FEC_MAX_K]; /* its parity index */
    uint32_t lens[RDPS_FEC_MAX_K];   /* a datagram's bytes from the symbol offset */
};

struct rdps_rx_par_stream {
    uint32_t k;          /* 0: no parity */
    uint32_t symbol_len; /* 0 until the first parity frame */
    uint32_t blocks;     /* records it holds */
    int32_t last;        /* the record of its latest frame (a hint), or -1 */
};

struct rdps_rx_parity {
    struct rdps_rx_parity_config cfg;
    struct rdps_rx_par_stream *streams;
    struct rdps_rx_par_block *blocks;
    uint8_t *mem;      /* blocks x k_max x slot_len */
    uint32_t slot_len; /* max_frame - RDPS_FRAME_SYMBOL_OFF + RDPS_FEC_LEN_BYTES */
    uint64_t stamp;
    struct rdps_fec *fec; /* set up for the k and symbol length of the last decode */
    uint8_t *scratch;     /* k_max rebuilt frames of max_frame bytes */
    struct rdps_rx_parity_counters c;
};

/* 0, RDPS_EINVAL (bad config) or RDPS_ENOMEM. blocks 0: nothing allocated, parity off. */
int rdps__rx_par_init(struct rdps_rx_parity *par, const struct rdps_rx_parity_config *cfg);
void rdps__rx_par_fini(struct rdps_rx_parity *par);

static inline bool rdps__rx_par_enabled(const struct rdps_rx_parity *par)
{
    return par->blocks != NULL;
}

/* Stream si's publisher has blocks of k (0: none; a k above k_max counts as none). */
void rdps__rx_par_set_k(struct rdps_rx_parity *par, int32_t si, uint32_t k);
static inline uint32_t rdps__rx_par_k(const struct rdps_rx_parity *par, int32_t si)
{
    return par->streams != NULL ? par->streams[si].k : 0;
}
/* Stream si stops: its records are freed and its k forgotten. */
void rdps__rx_par_stream_stop(struct rdps_rx_parity *par, int32_t si);
/* Frees stream si's records of blocks wholly before `consumed`. */
void rdps__rx_par_release_before(struct rdps_rx_parity *par, int32_t si, uint32_t consumed);

/*
 * DATA frame `frame` (len bytes, sequence seq) of stream si arrived and was admitted; `fresh`:
 * none of its block's earlier sequences had arrived or been consumed (a record opened now is
 * whole); records of blocks wholly before `consumed` are freed first when one is opened.
 * Returns the record's index when the block can now be decoded, else -1.
 */
int32_t rdps__rx_par_data(struct rdps_rx_parity *par, int32_t si, uint32_t seq,
                          const uint8_t *frame, uint32_t len, bool fresh, uint32_t consumed);
/* Whether stream si has a record of the block of seq (the caller then need not work out
 * `fresh`). */
bool rdps__rx_par_has(const struct rdps_rx_parity *par, int32_t si, uint32_t seq);
/* rdps__rx_par_data for admitted frame v of stream si, now tracked in t (works out `fresh`). */
int32_t rdps__rx_par_keep(struct rdps_rx_parity *par, int32_t si, const struct rdps_rx_track *t,
                          const struct rdps_frame_view *v);
/* A decoded PARITY frame of stream si. Returns the record's index when the block can now be
 * decoded, else -1 (counted). */
int32_t rdps__rx_par_parity(struct rdps_rx_parity *par, int32_t si,
                            const struct rdps_frame_view *v);

/*
 * The datagrams stream si's record of the block starting at `start` still needs (k less the
 * datagrams and symbols held), or -1 when there is no whole record, or it holds k (decoded: a
 * hole left is a rebuilt datagram the stream refused): ask by sequence.
 */
int32_t rdps__rx_par_missing(const struct rdps_rx_parity *par, int32_t si, uint32_t start);

/*
 * Recovery's parity NAKs (rdps_rx_recovery.h). The ranges due of stream si, split by block: the
 * part of a block sent whole (before `sent`) with a whole record becomes one range {block
 * start, what it still lacks} in blocks[] (returned count, at most RDPS_FRAME_NAK_MAX_RANGES);
 * the rest stays in ranges[] (*n updated), merged where adjacent.
 */
unsigned rdps__rx_par_by_block(const struct rdps_rx_parity *par, int32_t si,
                               struct rdps_seq_range *ranges, unsigned *n,
                               struct rdps_seq_range *blocks, uint32_t sent);
/* Whether a first NAK of [start, start + count) should wait: its last block is not sent whole
 * (before `sent`) and has a whole record (the NAK will ask for its count). */
bool rdps__rx_par_wait(const struct rdps_rx_parity *par, int32_t si, uint32_t start, uint32_t count,
                       uint32_t sent);

/*
 * Rebuilds record bi's missing datagrams: for each, calls fn(user, frame, len) with a whole
 * DATA frame (session and topic given: the stream's); the frame is valid during the call.
 * Returns the count rebuilt (0 when nothing could be). The record stays (the frames are marked
 * held first, so a rebuilt frame fed back is not kept twice).
 */
typedef void (*rdps_rx_par_rebuilt_fn)(void *user, const uint8_t *frame, uint32_t len);
int rdps__rx_par_decode(struct rdps_rx_parity *par, int32_t bi, uint32_t session_id,
                        uint64_t topic_id, rdps_rx_par_rebuilt_fn fn, void *user);

#endif /* RDPS_PROTO_RX_PARITY_H */
