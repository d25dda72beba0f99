/* SPDX-License-Identifier: BSD-2-Clause */
/* md_book_rx.c - md-book's receive side (md_book_rx.h): packets, snapshots and the directory into
 * the order books. */
#include "md_book_rx.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itch.h"
#include "md_directory.h"
#include "md_topics.h"

static const char *prog = "md-book";

int md_book_rx_init(struct md_book_rx *rx, const struct md_book_rx_config *cfg,
                    const struct md_book_rx_hooks *hooks)
{
    memset(rx, 0, sizeof(*rx));
    if (cfg->channels == 0 || cfg->channels > MD_BOOK_RX_MAX_CHANNELS)
        return -EINVAL;
    rx->cfg = *cfg;
    rx->hooks = *hooks;
    struct md_book_config bc;
    md_book_config_init(&bc);
    if (md_book_init(&rx->book, &bc) < 0)
        return -ENOMEM;
    if (lat_hist_init(&rx->oneway, 3) < 0) {
        md_book_fini(&rx->book);
        return -ENOMEM;
    }
    struct md_unpacker_config uc = {.max_msg_len = ITCH_MAX_LEN, .intended_times = true};
    md_unpacker_init(&rx->unpacker, &uc);
    for (uint32_t i = 0; i < cfg->channels; i++) {
        rx->channels[i].index = i;
        md_rec_init(&rx->channels[i].rec, &(struct md_rec_config){.channel = i});
    }
    return 0;
}

void md_book_rx_fini(struct md_book_rx *rx)
{
    for (uint32_t i = 0; i < rx->cfg.channels; i++)
        md_rec_fini(&rx->channels[i].rec);
    if (rx->snap_asm_ok)
        md_snap_asm_fini(&rx->snap_asm);
    md_book_fini(&rx->book);
    lat_hist_fini(&rx->oneway);
}

/* Applies a packet's messages from ch->next_seq on (a packet may overlap what a snapshot
 * covered, or repeat what the unreliable path delivered before), counting what is missing. */
static void apply_packet(struct md_book_rx *rx, struct md_book_rx_channel *ch,
                         struct md_packet_view *v, uint64_t now_real_ns)
{
    if (ch->next_seq != 0 && v->seq + v->count <= ch->next_seq) {
        if (v->seq + v->count <= ch->snap_seq + 1)
            ch->covered += v->count; /* held or in flight while the snapshot was taken */
        else
            ch->stale++; /* already applied: a duplicate the unreliable path let through */
        return;
    }
    if (ch->next_seq != 0 && v->seq > ch->next_seq)
        ch->missing += v->seq - ch->next_seq;
    uint64_t from = ch->next_seq;
    ch->packets++;
    ch->next_seq = v->seq + v->count;
    if (rx->first_intended_ns == 0)
        rx->first_intended_ns = v->intended_ns;
    uint64_t warm = rx->first_intended_ns + rx->cfg.warmup_ms * 1000000ull;
    struct md_msg m;
    while (md_packet_next(v, &m)) {
        struct itch_msg msg;
        if (m.seq < from) {
            ch->covered++;
            continue;
        }
        rx->messages++;
        if (itch_decode(m.data, m.len, &msg) < 0) {
            rx->bad_messages++;
            continue;
        }
        if (md_book_apply(&rx->book, &msg) < 0)
            rx->apply_errors++;
        if (rx->cfg.oneway && !rx->replaying && m.intended_ns >= warm &&
            now_real_ns >= m.intended_ns)
            lat_hist_record(&rx->oneway, now_real_ns - m.intended_ns);
    }
    if (rx->cfg.reflect_every != 0 && !rx->replaying && ch->index == 0 &&
        ch->packets % rx->cfg.reflect_every == 0 && rx->hooks.echo != NULL)
        rx->hooks.echo(rx->hooks.user, v, now_real_ns);
}

static void end_channel(struct md_book_rx *rx, struct md_book_rx_channel *ch, uint64_t end_seq)
{
    if (ch->next_seq != 0 && end_seq < ch->next_seq) {
        rx->ends_refused++; /* the feed sent more than that: not its end */
        return;
    }
    if (ch->next_seq != 0 && end_seq > ch->next_seq)
        ch->missing += end_seq - ch->next_seq;
    ch->next_seq = end_seq;
    if (!ch->ended) {
        ch->ended = true;
        rx->ended++;
    }
}

static void request_snapshot(struct md_book_rx *rx, struct md_book_rx_channel *ch, uint64_t now_ns)
{
    ch->last_request_ns = now_ns;
    rx->hooks.request(rx->hooks.user, ch->index);
}

/* The directory names every symbol (a late joiner missed the Stock Directory messages) and
 * must describe the channels this book subscribed to. dir_symbols counts the symbols it named
 * first. */
static void apply_directory(struct md_book_rx *rx, const uint8_t *data, size_t len)
{
    struct md_dir_channel *channels = calloc(MD_BOOK_RX_MAX_CHANNELS, sizeof(*channels));
    struct md_dir_symbol *symbols = calloc(MD_SNAP_LOCATE_MAX, sizeof(*symbols));
    struct md_dir d = {.channels = channels, .symbols = symbols};
    const char *why = NULL;
    if (channels == NULL || symbols == NULL ||
        md_dir_decode(data, len, &d, MD_BOOK_RX_MAX_CHANNELS, MD_SNAP_LOCATE_MAX, &why) < 0) {
        rx->dir_rejected++;
        fprintf(stderr, "%s: symbol directory refused: %s\n", prog, why ? why : "out of memory");
    } else if (d.channel_count != rx->cfg.channels) {
        rx->dir_rejected++;
        fprintf(stderr, "%s: the feed has %u channels, --channels says %u\n", prog, d.channel_count,
                rx->cfg.channels);
    } else {
        /* One slice of the directory (the feed sends it in slices): names add up. */
        rx->have_directory = true;
        for (uint32_t i = 0; i < d.n_symbols; i++) {
            uint16_t locate = (uint16_t)d.symbols[i].locate;
            struct itch_msg m = {.type = ITCH_STOCK_DIRECTORY, .stock_locate = locate};
            memset(&m.u.R, ' ', sizeof(m.u.R));
            memcpy(m.u.R.stock, d.symbols[i].name, strlen(d.symbols[i].name));
            bool named = md_book_stock(&rx->book, locate) != NULL;
            if (md_book_apply(&rx->book, &m) == 0 && !named)
                rx->dir_symbols++;
        }
    }
    free(channels);
    free(symbols);
}

/* A packet replayed from a recording before its session was heard live carries no source
 * (rdps_history_sub): the MoldUDP64 and rdps sessions still tie it to the feed. */
static bool source_unknown(const rdps_source *s)
{
    static const rdps_source none;
    return md_source_equal(s, &none);
}

/* Whether a valid packet of ch comes from the feed: its source and MoldUDP64 session, and the
 * channel's rdps session; the first one pins them (the source, the first one that has one). */
static bool from_the_feed(struct md_book_rx *rx, struct md_book_rx_channel *ch,
                          const struct md_packet_view *v, const rdps_msg_info *info)
{
    if (!rx->feed_pinned) {
        rx->feed_pinned = true;
        rx->feed_source = info->source;
        memcpy(rx->feed_session, v->session, MD_SESSION_LEN);
        if (rx->snap_early > 0 && !rx->have_directory)
            rx->dir_requested_ns = 0; /* an answer came before we knew the feed: ask again */
    } else if (memcmp(v->session, rx->feed_session, MD_SESSION_LEN) != 0) {
        return false;
    } else if (source_unknown(&rx->feed_source)) {
        rx->feed_source = info->source;
    } else if (!source_unknown(&info->source) &&
               !md_source_equal(&info->source, &rx->feed_source)) {
        return false;
    }
    if (!ch->pinned) {
        ch->pinned = true;
        ch->session_id = info->session_id;
    }
    return info->session_id == ch->session_id;
}

void md_book_rx_packet(struct md_book_rx *rx, uint32_t channel, const void *data, size_t len,
                       const rdps_msg_info *info, uint64_t now_real_ns, uint64_t now_ns)
{
    struct md_packet_view v;
    if (channel >= rx->cfg.channels || md_unpack(&rx->unpacker, data, len, &v) < 0) {
        rx->packets_rejected++;
        return;
    }
    struct md_book_rx_channel *ch = &rx->channels[channel];
    if (!from_the_feed(rx, ch, &v, info)) {
        rx->packets_foreign++;
        return;
    }
    enum md_rec_action action = md_rec_on_packet(&ch->rec, &v, data, len);
    if (action == MD_REC_REFUSED)
        return; /* numbered too far ahead: counted by the channel's md_rec */
    if (action == MD_REC_NEED_SNAPSHOT) {
        rx->recovering++;
        request_snapshot(rx, ch, now_ns);
    }
    if (ch->rec.state != MD_REC_LIVE) {
        if (v.kind == MD_PACKET_END_OF_SESSION)
            ch->end_seq = v.seq; /* checked once the snapshot is in */
        return;
    }
    if (v.kind == MD_PACKET_HEARTBEAT)
        return;
    if (v.kind == MD_PACKET_END_OF_SESSION) {
        end_channel(rx, ch, v.seq);
        return;
    }
    apply_packet(rx, ch, &v, now_real_ns);
}

/* A snapshot that fits a recovering channel: import it, then the packets held meanwhile. */
static void replay_held(struct md_book_rx *rx, struct md_book_rx_channel *ch)
{
    const uint8_t *data;
    size_t len;
    ch->snap_seq = md_rec_resume_seq(&ch->rec) - 1;
    ch->next_seq = ch->snap_seq + 1;
    rx->recovering--;
    rx->replaying = true;
    while (md_rec_next_held(&ch->rec, &data, &len)) {
        struct md_packet_view v;
        if (md_unpack(&rx->unpacker, data, len, &v) == 0)
            apply_packet(rx, ch, &v, 0);
    }
    rx->replaying = false;
    if (ch->end_seq != 0)
        end_channel(rx, ch, ch->end_seq);
}

void md_book_rx_snap_message(struct md_book_rx *rx, const void *msg, size_t msg_len,
                             const rdps_msg_info *info, uint64_t now_ns)
{
    const uint8_t *tagged = msg;
    if (!rx->feed_pinned) {
        rx->snap_early++; /* no channel packet yet: asked for again once the feed is known */
        return;
    }
    if (!md_source_equal(&info->source, &rx->feed_source)) {
        rx->snap_foreign++;
        return;
    }
    if (msg_len < 1 || (tagged[0] != MD_SNAPMSG_PART && tagged[0] != MD_SNAPMSG_DIRECTORY)) {
        rx->snap_parts_rejected++;
        return;
    }
    const uint8_t *data = tagged + 1;
    size_t len = msg_len - 1;
    if (tagged[0] == MD_SNAPMSG_DIRECTORY) {
        apply_directory(rx, data, len);
        return;
    }
    if (rx->recovering == 0) {
        rx->snap_parts_unneeded++; /* another book's recovery */
        return;
    }
    if (!rx->snap_asm_ok) {
        struct md_snap_asm_config sc = {.max_orders = 1u << 20,
                                        .max_symbols = MD_SNAP_LOCATE_MAX,
                                        .max_parts = 4096,
                                        .max_part_bytes = MD_SNAP_PART_BYTES};
        if (md_snap_asm_init(&rx->snap_asm, &sc) < 0) {
            rx->snap_parts_rejected++;
            return;
        }
        rx->snap_asm_ok = true;
    }
    int rc = md_snap_asm_add(&rx->snap_asm, data, len);
    if (rc < 0) {
        rx->snap_parts_rejected++;
        return;
    }
    const struct md_snap *s = md_snap_asm_result(&rx->snap_asm);
    if (rc != MD_SNAP_COMPLETE || s == NULL || s->channel >= rx->cfg.channels)
        return;
    struct md_book_rx_channel *ch = &rx->channels[s->channel];
    switch (md_rec_on_snapshot(&ch->rec, s, &rx->book)) {
    case MD_REC_REPLAY:
        replay_held(rx, ch);
        break;
    case MD_REC_NEED_SNAPSHOT:
        request_snapshot(rx, ch, now_ns); /* taken before this book's first packet: a newer one */
        break;
    default:
        break;
    }
}

void md_book_rx_retry(struct md_book_rx *rx, uint64_t now_ns)
{
    if (!rx->have_directory &&
        (rx->dir_requested_ns == 0 || now_ns - rx->dir_requested_ns >= MD_SNAP_RETRY_NS)) {
        rx->dir_requested_ns = now_ns;
        rx->hooks.request(rx->hooks.user, MD_SNAPREQ_DIRECTORY);
    }
    if (rx->recovering == 0)
        return;
    for (uint32_t i = 0; i < rx->cfg.channels; i++) {
        struct md_book_rx_channel *ch = &rx->channels[i];
        if (ch->rec.state == MD_REC_RECOVERING && now_ns - ch->last_request_ns >= MD_SNAP_RETRY_NS)
            request_snapshot(rx, ch, now_ns);
    }
}

bool md_book_rx_done(const struct md_book_rx *rx)
{
    return rx->ended >= rx->cfg.channels && rx->recovering == 0;
}
