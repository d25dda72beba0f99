/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_archive.h - recorded history (rdps 1.3): a recorder that appends topics to a segmented,
 * compressed, checksummed, indexed log on disk, a reader that iterates and seeks it without the
 * network, and the catalog of recordings (docs/recording.md, docs/archive-format.md). */
#ifndef RDPS_RDPS_ARCHIVE_H
#define RDPS_RDPS_ARCHIVE_H

#include <rdps/rdps.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A recording directory holds a catalog (catalog.rdpc) and one subdirectory per recording, each a
 * series of segment files with their indexes. A recording is what one recorder wrote between
 * rdps_recorder_create and rdps_recorder_destroy; its id is 1 for the first in a directory and
 * counts up. One recorder writes into a directory at a time (RDPS_EBUSY for a second one, which
 * is told the first one's pid in rdps_last_error_message()); readers may read at any time,
 * including the recording being written (up to what the recorder has flushed).
 */

/* What a record is (rdps_archive_record.type). */
typedef enum rdps_archive_record_type {
    RDPS_ARCHIVE_MESSAGE = 1,       /* a message, as a subscriber received it */
    RDPS_ARCHIVE_TOPIC = 2,         /* not returned by the reader: names topic_id (topic) */
    RDPS_ARCHIVE_LOSS = 3,          /* RDPS_EVENT_LOSS: datagrams [seq, seq + count) lost */
    RDPS_ARCHIVE_GAP = 4,           /* RDPS_EVENT_GAP (unreliable session), as LOSS */
    RDPS_ARCHIVE_SESSION_START = 5, /* RDPS_EVENT_PUBLISHER_SEEN: a publisher session appeared */
    RDPS_ARCHIVE_SESSION_END = 6,   /* RDPS_EVENT_PUBLISHER_GONE (reason: rdps_gone_reason) */
    RDPS_ARCHIVE_OVERRUN = 7,       /* the recorder dropped `count` messages, all topics, between
                                       publisher_ts_ns and recorder_ts_ns: its disk fell behind */
} rdps_archive_record_type;

/* rdps_archive_record.flags */
#define RDPS_ARCHIVE_F_RETRANSMITTED 0x1u /* a fragment of the message was a repair */

/*
 * One record as the reader returns it; valid until the next call on the reader. Structs the
 * library fills grow only at their end.
 */
typedef struct rdps_archive_record {
    rdps_archive_record_type type;
    unsigned flags;           /* RDPS_ARCHIVE_F_* */
    uint64_t number;          /* position in the recording: 0, 1, 2, ... (every record type) */
    const char *topic;        /* the topic's name ("" if the recording never named it) */
    uint64_t topic_id;        /* rdps_topic_id(topic) */
    uint32_t session_id;      /* publisher session */
    uint32_t seq;             /* MESSAGE: its first datagram; LOSS/GAP: first datagram lost */
    uint32_t ordinal;         /* message ordinal in its session (0 until the wire carries one) */
    uint32_t count;           /* MESSAGE: datagrams; LOSS/GAP: datagrams lost; OVERRUN:
                                 messages dropped */
    uint64_t publisher_ts_ns; /* MESSAGE: rdps_msg_info.publisher_ts_ns; OVERRUN: first drop */
    uint64_t recorder_ts_ns;  /* the recorder's CLOCK_REALTIME when it took the record (never
                                 decreasing within a recording) */
    const void *data;         /* MESSAGE: the message */
    size_t len;
    int reason;         /* LOSS: rdps_loss_reason; SESSION_END: rdps_gone_reason; else 0 */
    uint32_t messages;  /* LOSS/GAP: messages lost when the wire says (0: unknown) */
    rdps_source source; /* SESSION_START/END: the publisher */
} rdps_archive_record;

/* ------------------------------------------------------------------------ */
/* Catalog. */

/* rdps_archive_info.state */
typedef enum rdps_archive_state {
    RDPS_ARCHIVE_RECORDING = 0, /* no stop entry: being written, or its recorder died (the next
                                   recorder in the directory closes it as RECOVERED) */
    RDPS_ARCHIVE_STOPPED = 1,   /* closed by its recorder */
    RDPS_ARCHIVE_DISK_FULL = 2, /* stopped because the disk filled (every record up to the stop is
                                   intact) */
    RDPS_ARCHIVE_IO_ERROR = 3,  /* stopped by another write error */
    RDPS_ARCHIVE_RECOVERED = 4, /* its recorder died; a later one cut the torn tail and closed it */
} rdps_archive_state;

typedef struct rdps_archive_info {
    uint64_t id;
    rdps_archive_state state;
    uint64_t start_ns, end_ns;  /* recorder clock; end_ns 0 while RECORDING */
    const char *spec;           /* what was recorded: "topics a,b" or "prefix md." */
    uint32_t first_segment;     /* retention removed the segments before it */
    uint32_t segments;          /* as the stop entry says (0 while RECORDING) */
    uint64_t records, messages; /* as the stop entry says */
    uint64_t loss_events, overrun_messages, bytes;
} rdps_archive_info;

/*
 * Calls cb for every recording of the directory's catalog, oldest first; `info` is valid during
 * the call. Returns the number of recordings, RDPS_ENOENT (no catalog there), RDPS_EPROTO (the
 * catalog is not one), or -errno. A torn last entry (a recorder killed while appending) is
 * ignored.
 */
typedef void (*rdps_archive_info_cb)(void *user, const rdps_archive_info *info);
RDPS_EXPORT int rdps_archive_list(const char *dir, rdps_archive_info_cb cb, void *user);

/* ------------------------------------------------------------------------ */
/* Reading. */

typedef struct rdps_archive_reader rdps_archive_reader_t;

/*
 * Opens recording `id` of `dir` (0: the newest) for reading. The reader needs no network and no
 * ctx; it reads what is on disk when it reaches it (so it follows a recording being written up to
 * what is flushed). Returns 0, RDPS_ENOENT (no such recording), RDPS_ENOMEM, or -errno.
 */
RDPS_EXPORT int rdps_archive_reader_open(const char *dir, uint64_t id, rdps_archive_reader_t **out);
RDPS_EXPORT void rdps_archive_reader_close(rdps_archive_reader_t *reader);
/* The recording's id (the newest's when opened with 0). */
RDPS_EXPORT uint64_t rdps_archive_reader_id(const rdps_archive_reader_t *reader);
/*
 * The next record in order: 1 and *rec, 0 at the end of what is on disk (call again later to
 * follow a live recording), or a negative code: RDPS_EBADFRAME when a chunk fails its checks
 * (rdps_last_error_message() names the file and offset; calling again skips to the next valid
 * chunk), -errno for a read error. TOPIC records are consumed, never returned.
 */
RDPS_EXPORT int rdps_archive_reader_next(rdps_archive_reader_t *reader, rdps_archive_record *rec);
/* Positions the reader at the first record whose recorder_ts_ns >= ts_ns (0: the start). Returns
 * 0 (at the end when no record is that late), or a negative code. */
RDPS_EXPORT int rdps_archive_reader_seek_time(rdps_archive_reader_t *reader, uint64_t ts_ns);
/* Positions the reader at record number `number` (rdps_archive_record.number). */
RDPS_EXPORT int rdps_archive_reader_seek_record(rdps_archive_reader_t *reader, uint64_t number);
/*
 * Positions the reader at the first record of publisher session `session_id` of topic `topic_id`
 * whose seq is `seq` or later (serial arithmetic: within 2^31 after), the records of other
 * sessions before it skipped too; RDPS_ENOENT when the recording has no such record.
 */
RDPS_EXPORT int rdps_archive_reader_seek_seq(rdps_archive_reader_t *reader, uint64_t topic_id,
                                             uint32_t session_id, uint32_t seq);

/* What rdps_archive_verify found. */
typedef struct rdps_archive_verify_result {
    uint64_t segments, chunks, records, bytes;
    uint64_t bad_chunks;  /* chunks failing a checksum or a field check */
    uint64_t bad_indexes; /* index files missing, torn or disagreeing with their segment */
    uint64_t torn_bytes;  /* bytes after the last whole chunk of a segment */
    uint64_t first_ts, last_ts;
} rdps_archive_verify_result;
/*
 * Checks every chunk of recording `id` (0: newest): checksums, decompression, every record, the
 * numbering across chunks and segments, and each index against its segment. Calls `problem` (may
 * be NULL) with a one-line description of each problem. Returns 0 when all is well, 1 when
 * something was found, or a negative code when the recording cannot be read.
 */
RDPS_EXPORT int rdps_archive_verify(const char *dir, uint64_t id,
                                    void (*problem)(void *user, const char *line), void *user,
                                    rdps_archive_verify_result *result);

/* ------------------------------------------------------------------------ */
/* Recording. */

typedef struct rdps_recorder rdps_recorder_t;

/* rdps_recorder_opts.compression */
typedef enum rdps_archive_compression {
    RDPS_ARCHIVE_ZSTD = 0, /* default */
    RDPS_ARCHIVE_NONE = 1,
} rdps_archive_compression;

/* rdps_recorder_opts.on_event: what the recorder tells the application (from rdps_recorder_poll,
 * on the ctx's thread). */
typedef enum rdps_recorder_event_type {
    RDPS_RECORDER_TOPIC_ADDED = 1,   /* now recording `topic` (found through the prefix) */
    RDPS_RECORDER_RECOVERED = 2,     /* an unfinished recording was closed: `detail` says what was
                                        cut (at create, before any other event) */
    RDPS_RECORDER_OVERRUN = 3,       /* count messages dropped: the disk fell behind (an OVERRUN
                                        record marks them in the recording) */
    RDPS_RECORDER_STOPPED = 4,       /* recording stopped: error is RDPS_ENOSPC (disk full) or
                                        another write error; everything before is intact */
    RDPS_RECORDER_TOPIC_REFUSED = 5, /* a topic the prefix matched could not be subscribed
                                        (error; the topic cap, or rdps_sub_create's code) */
} rdps_recorder_event_type;

typedef struct rdps_recorder_event {
    rdps_recorder_event_type type;
    const char *topic;
    uint64_t count;
    int error;
    const char *detail;
} rdps_recorder_event;
typedef void (*rdps_recorder_event_cb)(void *user, const rdps_recorder_event *ev);

/* Recorder options: start from zero; zero fields take the defaults. */
typedef struct rdps_recorder_opts {
    const char *dir;           /* the recording directory (created if missing), required */
    const char *const *topics; /* topic names to record */
    size_t topic_count;
    const char *prefix;  /* and/or every topic whose publishers discovery announces with
                            a name starting with this (one ctx per prefix recorder) */
    uint32_t max_topics; /* cap on topics recorded (default 4096) */
    int reliable_off;    /* 1: subscribe unreliably (default: reliably) */
    int from_oldest;     /* 1: reliable sessions start at the publisher's oldest */
    rdps_archive_compression compression;
    int zstd_level;         /* default 1 (fastest; see docs/recording.md) */
    uint32_t chunk_bytes;   /* raw bytes that seal a chunk (default 64 KiB, 4 KiB..16 MiB) */
    uint32_t flush_ms;      /* a record is written at most this long after it arrived
                               (default 100; the kill -9 rule, docs/recording.md) */
    uint32_t fsync_ms;      /* fdatasync at most this long after a write (default 1000;
                               UINT32_MAX: never, only at segment close) */
    uint64_t segment_bytes; /* rotate at this size (default 256 MiB, >= 1 MiB) */
    uint32_t segment_s;     /* and/or after this many seconds (default 0: no limit) */
    uint64_t retain_bytes;  /* delete the oldest closed segments of the directory beyond
                               this total (default 0: keep all) */
    uint32_t retain_s;      /* and segments that ended longer ago than this (0: keep) */
    size_t queue_bytes;     /* the queue between the ctx's thread and the writer thread
                               (default 64 MiB, >= 1 MiB): what absorbs a slow disk */
    rdps_recorder_event_cb on_event;
    void *event_user;
    /* 1: do not serve replay-merge requests for the recorded topics (default: serve them;
     * docs/replay-merge.md). */
    int history_off;
} rdps_recorder_opts;

/*
 * Starts a recording in opts->dir: closes an unfinished recording found there (RECOVERED event),
 * appends a catalog entry, starts the writer thread, subscribes to the topics. The recorder's
 * subscribers belong to ctx and its thread: call rdps_recorder_poll after rdps_ctx_poll on that
 * thread. The writer thread touches no ctx. Returns 0, RDPS_EINVAL (an option out of range, no
 * topic and no prefix), RDPS_EBUSY (another recorder holds the directory), or another negative
 * code (rdps_last_error_message() says what failed).
 */
RDPS_EXPORT int rdps_recorder_create_sized(rdps_ctx_t *ctx, const rdps_recorder_opts *opts,
                                           size_t opts_size, rdps_recorder_t **out);
static inline int rdps_recorder_create(rdps_ctx_t *ctx, const rdps_recorder_opts *opts,
                                       rdps_recorder_t **out)
{
    return rdps_recorder_create_sized(ctx, opts, sizeof(*opts), out);
}
/*
 * On the ctx's thread: subscribes to topics the prefix found, raises the recorder's events,
 * writes overrun markers. Returns 0 while recording, or the error that stopped it (RDPS_ENOSPC:
 * the disk filled): messages are no longer recorded.
 */
RDPS_EXPORT int rdps_recorder_poll(rdps_recorder_t *rec);
/* Stops: drains the queue to disk, closes the segment and the recording (catalog STOP entry),
 * destroys its subscribers. NULL ok. */
RDPS_EXPORT void rdps_recorder_destroy(rdps_recorder_t *rec);

typedef struct rdps_recorder_stats {
    uint64_t recording_id;
    uint64_t records, messages, message_bytes;  /* taken into the queue */
    uint64_t written_records, written_messages; /* in chunks written to disk (write(2) done:
                                                   they survive the process, not yet a power
                                                   loss before the next fsync) */
    uint64_t chunks, segments;
    uint64_t stored_bytes, raw_bytes; /* chunk bytes on disk / before compression */
    uint64_t loss_events, gap_events, sessions_started, sessions_ended;
    uint64_t overrun_messages, overrun_events;
    uint64_t queue_high_water; /* largest queue fill seen, bytes */
    uint64_t fsyncs, segments_deleted;
    uint32_t topics;
    int error;                                /* 0, or what stopped the recording */
    uint64_t replays_served, replays_refused; /* replay-merge requests (history subscribers) */
} rdps_recorder_stats;
/* Fills the first `size` bytes of *out with the recorder's figures (on the ctx's thread). 0, or
 * RDPS_EINVAL for NULL arguments. */
RDPS_EXPORT int rdps_recorder_stats_sized(const rdps_recorder_t *rec, rdps_recorder_stats *out,
                                          size_t size);
static inline int rdps_recorder_get_stats(const rdps_recorder_t *rec, rdps_recorder_stats *out)
{
    return rdps_recorder_stats_sized(rec, out, sizeof(*out));
}

/* ------------------------------------------------------------------------ */
/* Late join from history (replay-merge; docs/replay-merge.md). */

typedef struct rdps_history_sub rdps_history_sub_t;

/* History subscriber options: start from zero; zero fields take the defaults. */
typedef struct rdps_history_opts {
    uint64_t from_ns;       /* history from this recorder time (CLOCK_REALTIME ns; 0: from the
                               start of the recorder's current recording) */
    int from_session_start; /* 1: from the first record of each of the topic's publisher sessions
                               the recording has not seen end (instead of from_ns) */
    size_t buffer_bytes;    /* live messages held while history catches up (default 64 MiB,
                               at least 64 KiB): beyond, the oldest go and history covers them */
    uint32_t timeout_ms;    /* no recorder answers, or the replay stalls, this long: the topic
                               goes live (rdps_history_sub_poll returns RDPS_ETIMEDOUT once;
                               default 10000) */
    rdps_event_cb
        on_event;     /* the live subscriber's events, and LOSS where the recording had a
                         hole or stops short of the live stream (RDPS_LOSS_NOT_IN_RECORDING) */
    void *event_user; /* NULL: the create call's user */
} rdps_history_opts;

/*
 * A reliable subscriber of `topic` that first receives the topic's history from a recorder
 * serving it (found through discovery: a recorder announces a subscriber of the topic's request
 * topic), then moves onto the live stream: per publisher session every message once, in order,
 * with no gap and no duplicate at the seam, and RDPS_EVENT_LOSS only where the recording has a
 * hole. The callbacks follow rdps_msg_cb's rules; history messages carry the recorded session,
 * sequence and publisher timestamp. Call rdps_history_sub_poll after rdps_ctx_poll on the ctx's
 * thread. Returns 0, RDPS_EINVAL, RDPS_ENOMEM, or rdps_sub_create's codes.
 */
RDPS_EXPORT int rdps_history_sub_create_sized(rdps_ctx_t *ctx, const char *topic,
                                              rdps_msg_cb on_message, void *user,
                                              const rdps_history_opts *opts, size_t opts_size,
                                              rdps_history_sub_t **out);
static inline int rdps_history_sub_create(rdps_ctx_t *ctx, const char *topic,
                                          rdps_msg_cb on_message, void *user,
                                          const rdps_history_opts *opts, rdps_history_sub_t **out)
{
    return rdps_history_sub_create_sized(ctx, topic, on_message, user, opts, sizeof(*opts), out);
}
/* Progress (requests, syncs, timeouts): 1 once every session is live, 0 while merging,
 * RDPS_ETIMEDOUT once when no recorder answered in time (the topic then goes live), or
 * RDPS_EPROTO when the recorder refused (busy, no recording). */
RDPS_EXPORT int rdps_history_sub_poll(rdps_history_sub_t *hs);
RDPS_EXPORT void rdps_history_sub_destroy(rdps_history_sub_t *hs);

#ifdef __cplusplus
}
#endif
#endif /* RDPS_RDPS_ARCHIVE_H */
