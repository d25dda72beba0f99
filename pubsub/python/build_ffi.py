#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""build_ffi.py - writes the C source of rdps._rdps_cffi, the binding's compiled half (cffi API
mode): the declarations below are checked by the C compiler against rdps.h when CMake builds it.

usage: build_ffi.py RDPS_H OUTPUT_C
"""
import re
import sys

import cffi

# Structs end in "...;": the compiler, not this file, decides their layout (rdps.h is the truth).
CDEF = r"""
typedef struct rdps_ctx rdps_ctx_t;
typedef struct rdps_pub rdps_pub_t;
typedef struct rdps_sub rdps_sub_t;

#define RDPS_VERSION_NUMBER ...
#define RDPS_DOMAIN_KEY_BYTES ...
#define RDPS_DOMAIN_KEY_ID_MAX ...
#define RDPS_TOPIC_NAME_MAX ...
#define RDPS_SEND_MORE ...

typedef struct rdps_config {
    const char *device;
    const char *bind_ip;
    uint8_t port_num;
    uint16_t cm_port;
    uint32_t qkey;
    const char *group_range;
    const char *control_group;
    size_t max_message_size;
    size_t reassembly_memory;
    uint32_t reassembly_timeout_ms;
    uint32_t max_sessions;
    uint32_t max_sessions_per_source;
    uint32_t max_partials;
    uint32_t max_partials_per_source;
    size_t reassembly_memory_per_source;
    uint32_t announce_interval_ms;
    uint32_t max_peers;
    uint32_t max_remote_only_peers;
    uint32_t peer_interval_min_ms;
    uint32_t peer_interval_max_ms;
    uint32_t send_slots;
    uint32_t recv_slots;
    double loss_rx_rate;
    double loss_tx_rate;
    uint32_t loss_frame_types;
    uint64_t loss_seed;
    int stats_off;
    const uint8_t *domain_key;
    uint32_t domain_key_id;
    int encrypt;
    const char *domain_key_file;
    uint32_t replay_senders;
    const char *peers;
    uint32_t max_contacts;
    uint32_t multicast_timeout_ms;
    uint32_t max_unicast_subscribers;
    uint32_t parity_blocks;
    uint32_t replay_max_age_ms;
    uint32_t unicast_subscribers_per_host;
    ...;
} rdps_config;

typedef enum rdps_flow_control { RDPS_FLOW_MAX, RDPS_FLOW_MIN, RDPS_FLOW_TAGGED, ... }
    rdps_flow_control;
typedef enum rdps_transport_mode { RDPS_TRANSPORT_MULTICAST, RDPS_TRANSPORT_UNICAST,
    RDPS_TRANSPORT_AUTO, ... } rdps_transport_mode;
typedef enum rdps_batch_mode { RDPS_BATCH_AUTO, RDPS_BATCH_OFF, ... } rdps_batch_mode;
typedef enum rdps_event_type { RDPS_EVENT_GAP, RDPS_EVENT_PUBLISHER_SEEN,
    RDPS_EVENT_PUBLISHER_GONE, RDPS_EVENT_QP_RECOVERED, RDPS_EVENT_RECEIVER_EVICTED,
    RDPS_EVENT_RECEIVER_RESUMED, RDPS_EVENT_RECEIVER_TIMED_OUT, RDPS_EVENT_LOSS,
    RDPS_EVENT_SUBSCRIBER_SEEN, RDPS_EVENT_SUBSCRIBER_GONE, RDPS_EVENT_TOPIC_COLLISION,
    RDPS_EVENT_UNICAST_FALLBACK, ... } rdps_event_type;

typedef struct rdps_pub_opts {
    const char *group;
    int reliable;
    size_t ring_bytes;
    rdps_flow_control flow;
    uint32_t flow_tag;
    uint32_t flow_min_receivers;
    uint32_t receiver_timeout_ms;
    uint64_t rate_limit;
    rdps_transport_mode transport;
    uint32_t parity_k;
    uint32_t parity_proactive;
    rdps_batch_mode batching;
    uint32_t batch_linger_us;
    uint32_t concurrent;
    uint32_t concurrent_queue_bytes;
    ...;
} rdps_pub_opts;

typedef struct rdps_sub_opts {
    const char *group;
    int reliable;
    int from_oldest;
    uint32_t flow_tag;
    rdps_transport_mode transport;
    ...;
} rdps_sub_opts;

typedef struct rdps_claim {
    void *data;
    size_t capacity;
    ...;
} rdps_claim;

typedef struct rdps_counters { ...; } rdps_counters;

typedef struct rdps_event { rdps_event_type type; int reason; ...; } rdps_event;

const char *rdps_strerror(int err);
const char *rdps_err_name(int err);
const char *rdps_last_error_message(void);
const char *rdps_version(void);

void rdps_config_init_sized(rdps_config *cfg, size_t size);
int rdps_ctx_create_sized(const rdps_config *cfg, size_t size, unsigned header_version,
                          rdps_ctx_t **out);
void rdps_ctx_destroy(rdps_ctx_t *ctx);
int rdps_ctx_handover(rdps_ctx_t *ctx);
int rdps_ctx_poll(rdps_ctx_t *ctx, int budget);
int rdps_ctx_fd(rdps_ctx_t *ctx);
int rdps_ctx_arm(rdps_ctx_t *ctx);
int rdps_ctx_next_timeout_ms(rdps_ctx_t *ctx);
int rdps_ctx_wait(rdps_ctx_t *ctx, int timeout_ms);
size_t rdps_ctx_max_datagram_payload(const rdps_ctx_t *ctx);
int rdps_ctx_flush(rdps_ctx_t *ctx);
int rdps_ctx_sends_pending(const rdps_ctx_t *ctx);

int rdps_domain_key_read(const char *path, uint8_t key[], uint32_t *key_id);
int rdps_ctx_key_add(rdps_ctx_t *ctx, const uint8_t key[], uint32_t key_id);
int rdps_ctx_key_use(rdps_ctx_t *ctx, uint32_t key_id);
int rdps_ctx_key_remove(rdps_ctx_t *ctx, uint32_t key_id);
uint32_t rdps_ctx_key_in_use(const rdps_ctx_t *ctx);

void rdps_pub_destroy(rdps_pub_t *pub);
int rdps_pub_ready(const rdps_pub_t *pub);
int rdps_pub_send(rdps_pub_t *pub, const char *data, size_t len);
int rdps_pub_send_ex(rdps_pub_t *pub, const char *data, size_t len, unsigned flags);
int rdps_pub_claim_ex(rdps_pub_t *pub, size_t len, unsigned flags, rdps_claim *claim);
int rdps_pub_commit(rdps_pub_t *pub, rdps_claim *claim, size_t len);
void rdps_pub_abort(rdps_pub_t *pub, rdps_claim *claim);
size_t rdps_pub_max_message_size(const rdps_pub_t *pub);
uint32_t rdps_pub_session(const rdps_pub_t *pub);
int rdps_pub_subscriber_count(const rdps_pub_t *pub);
int rdps_pub_receivers_behind(const rdps_pub_t *pub);

void rdps_sub_destroy(rdps_sub_t *sub);
int rdps_sub_ready(const rdps_sub_t *sub);

uint64_t rdps_topic_id(const char *topic);
int rdps_topic_group(const rdps_ctx_t *ctx, const char *topic, char *buf, size_t len);
int rdps_ctx_map_topic(rdps_ctx_t *ctx, const char *topic, const char *group);

size_t rdps_counter_count(void);
const char *rdps_counter_name(size_t index);
const char *rdps_counter_description(size_t index);
int rdps_ctx_counters_sized(const rdps_ctx_t *ctx, rdps_counters *out, size_t size);
int rdps_pub_counters_sized(const rdps_pub_t *pub, rdps_counters *out, size_t size);
int rdps_sub_counters_sized(const rdps_sub_t *sub, rdps_counters *out, size_t size);

const char *rdps_event_name(rdps_event_type type);
const char *rdps_event_reason_name(const rdps_event *ev);

#define PYRDPS_EVENT_BIT ...
struct pyrdps_info {
    uint64_t topic_id;
    uint64_t publisher_ts_ns;
    uint32_t session_id;
    uint32_t seq;
    uint32_t ordinal;
    uint32_t fragments;
    int32_t retransmitted;
    uint32_t qpn;
    uint16_t lid;
    uint8_t has_gid;
    uint8_t gid[16];
};
struct pyrdps_event {
    int32_t type;
    int32_t reason;
    uint32_t session_id;
    uint32_t first_seq;
    uint32_t count;
    uint32_t receiver_id;
    uint32_t first_ordinal;
    uint32_t msg_count;
    uint32_t qpn;
    uint16_t lid;
    uint8_t has_gid;
    uint8_t gid[16];
};
struct pyrdps_batch {
    size_t count;
    uint32_t *token;
    uint64_t *offset;
    uint64_t *length;
    uint32_t *record;
    uint8_t *arena;
    size_t arena_used;
    struct pyrdps_info *infos;
    size_t info_count;
    struct pyrdps_event *events;
    size_t event_count;
    uint64_t dropped;
    unsigned long writer;
    ...;
};
struct pyrdps_batch *pyrdps_batch_new(void);
void pyrdps_batch_free(struct pyrdps_batch *batch);
void pyrdps_batch_reset(struct pyrdps_batch *batch);
void pyrdps_sink_forget(struct pyrdps_batch *batch, uint32_t token);
int pyrdps_pub_create(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                      struct pyrdps_batch *batch, uint32_t token, int events, rdps_pub_t **out);
int pyrdps_sub_create(rdps_ctx_t *ctx, const char *topic, const rdps_sub_opts *opts,
                      struct pyrdps_batch *batch, uint32_t token, int events, rdps_sub_t **out);
"""


def error_names(header_text):
    """The error codes' names, from RDPS_ERROR_MAP itself (so a new code needs no edit here)."""
    block = header_text.split("#define RDPS_ERROR_MAP(X)", 1)[1].split("enum rdps_error", 1)[0]
    names = re.findall(r"X\((E[A-Z]+),", block)
    if not names:
        raise SystemExit("build_ffi.py: no RDPS_ERROR_MAP in the header")
    return names


def main(argv):
    if len(argv) != 3:
        raise SystemExit(__doc__)
    header_path, output = argv[1], argv[2]
    with open(header_path, encoding="utf-8") as f:
        names = error_names(f.read())
    ffi = cffi.FFI()
    ffi.cdef(CDEF + "".join("#define RDPS_%s ...\n" % n for n in names))
    ffi.cdef("static const char *const PYRDPS_ERROR_NAMES;")
    ffi.set_source(
        "rdps._rdps_cffi",
        '#include "collect.h"\n'
        'static const char *const PYRDPS_ERROR_NAMES = "%s";\n' % " ".join(names),
    )
    ffi.emit_c_code(output)


if __name__ == "__main__":
    main(sys.argv)
