/* SPDX-License-Identifier: BSD-2-Clause */
/* md_directory.c - SymbolDirectory encode/decode through protobuf-c, with one validator for both.
 */
#include "md_directory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "md.pb-c.h"

static int fail(const char **why, const char *reason, int rc)
{
    if (why != NULL)
        *why = reason;
    return rc;
}

static bool name_ok(const char *name)
{
    size_t n = strnlen(name, MD_DIR_NAME_MAX + 1);
    if (n == 0 || n > MD_DIR_NAME_MAX || name[0] == ' ' || name[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++)
        if (name[i] < 0x20 || name[i] > 0x7e)
            return false;
    return true;
}

int md_dir_check(const struct md_dir *d, const char **why)
{
    uint8_t described[(0xFFFF + 1) / 8]; /* channels, then locates */
    if (d->channel_count == 0 || d->channel_count > 0xFFFF)
        return fail(why, "channel_count outside 1..65535", -EINVAL);
    if (d->n_channels != d->channel_count)
        return fail(why, "not every channel described exactly once", -EINVAL);
    memset(described, 0, sizeof(described));
    for (uint32_t i = 0; i < d->n_channels; i++) {
        const struct md_dir_channel *c = &d->channels[i];
        size_t topic_len = strnlen(c->topic, sizeof(c->topic));
        if (c->channel >= d->channel_count || (described[c->channel / 8] & (1u << c->channel % 8)))
            return fail(why, "not every channel described exactly once", -EINVAL);
        described[c->channel / 8] |= (uint8_t)(1u << c->channel % 8);
        if (topic_len == 0 || topic_len > MD_DIR_TOPIC_MAX)
            return fail(why, "channel topic not 1..255 bytes", -EINVAL);
        if (c->max_msg_len == 0 || c->max_msg_len > 0xFFFF)
            return fail(why, "channel max_msg_len outside 1..65535", -EINVAL);
    }
    memset(described, 0, sizeof(described));
    for (uint32_t i = 0; i < d->n_symbols; i++) {
        const struct md_dir_symbol *s = &d->symbols[i];
        if (s->locate == 0 || s->locate > 0xFFFF)
            return fail(why, "symbol locate outside 1..65535", -EINVAL);
        if (described[s->locate / 8] & (1u << s->locate % 8))
            return fail(why, "symbol locate repeated", -EINVAL);
        described[s->locate / 8] |= (uint8_t)(1u << s->locate % 8);
        if (!name_ok(s->name))
            return fail(why, "symbol name not 1..8 printable ASCII characters", -EINVAL);
        if (s->channel >= d->channel_count)
            return fail(why, "symbol channel not below channel_count", -EINVAL);
    }
    return 0;
}

int md_dir_encode(const struct md_dir *d, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int rc = md_dir_check(d, NULL);
    if (rc < 0)
        return rc;
    Rdps__Md__SymbolDirectory msg = RDPS__MD__SYMBOL_DIRECTORY__INIT;
    Rdps__Md__Channel *channels = calloc(d->n_channels, sizeof(*channels));
    Rdps__Md__Channel **channel_ptrs = calloc(d->n_channels, sizeof(*channel_ptrs));
    Rdps__Md__Symbol *symbols = calloc(d->n_symbols ? d->n_symbols : 1, sizeof(*symbols));
    Rdps__Md__Symbol **symbol_ptrs = calloc(d->n_symbols ? d->n_symbols : 1, sizeof(*symbol_ptrs));
    if (!channels || !channel_ptrs || !symbols || !symbol_ptrs) {
        rc = -ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < d->n_channels; i++) {
        const struct md_dir_channel *c = &d->channels[i];
        rdps__md__channel__init(&channels[i]);
        channels[i].channel = c->channel;
        channels[i].topic = (char *)c->topic;
        channels[i].session.data = (uint8_t *)c->session;
        channels[i].session.len = MD_SESSION_LEN;
        channels[i].intended_times = c->intended_times;
        channels[i].max_msg_len = c->max_msg_len;
        channel_ptrs[i] = &channels[i];
    }
    for (uint32_t i = 0; i < d->n_symbols; i++) {
        rdps__md__symbol__init(&symbols[i]);
        symbols[i].locate = d->symbols[i].locate;
        symbols[i].name = (char *)d->symbols[i].name;
        symbols[i].channel = d->symbols[i].channel;
        symbol_ptrs[i] = &symbols[i];
    }
    msg.channel_count = d->channel_count;
    msg.n_channels = d->n_channels;
    msg.channels = channel_ptrs;
    msg.n_symbols = d->n_symbols;
    msg.symbols = symbol_ptrs;
    size_t need = rdps__md__symbol_directory__get_packed_size(&msg);
    *out = malloc(need ? need : 1);
    if (*out == NULL) {
        rc = -ENOMEM;
        goto done;
    }
    *len = rdps__md__symbol_directory__pack(&msg, *out);
done:
    free(channels);
    free(channel_ptrs);
    free(symbols);
    free(symbol_ptrs);
    return rc;
}

int md_dir_decode(const uint8_t *buf, size_t len, struct md_dir *d, uint32_t max_channels,
                  uint32_t max_symbols, const char **why)
{
    if (len > MD_DIR_MAX_BYTES)
        return fail(why, "directory longer than MD_DIR_MAX_BYTES", -EMSGSIZE);
    Rdps__Md__SymbolDirectory *msg = rdps__md__symbol_directory__unpack(NULL, len, buf);
    if (msg == NULL)
        return fail(why, "not a SymbolDirectory", -EBADMSG);
    int rc = 0;
    d->n_channels = d->n_symbols = 0;
    d->channel_count = msg->channel_count;
    if (msg->n_channels > max_channels || msg->n_symbols > max_symbols) {
        rc = fail(why, "more channels or symbols than the caller holds", -ENOSPC);
        goto done;
    }
    for (size_t i = 0; i < msg->n_channels; i++) {
        const Rdps__Md__Channel *m = msg->channels[i];
        struct md_dir_channel *c = &d->channels[i];
        size_t topic_len = strlen(m->topic);
        if (topic_len == 0 || topic_len > MD_DIR_TOPIC_MAX || m->session.len != MD_SESSION_LEN) {
            rc = fail(why, "channel topic not 1..255 bytes or session not 10 bytes", -EINVAL);
            goto done;
        }
        c->channel = m->channel;
        memcpy(c->topic, m->topic, topic_len + 1);
        memcpy(c->session, m->session.data, MD_SESSION_LEN);
        c->intended_times = m->intended_times;
        c->max_msg_len = m->max_msg_len;
    }
    for (size_t i = 0; i < msg->n_symbols; i++) {
        const Rdps__Md__Symbol *m = msg->symbols[i];
        struct md_dir_symbol *s = &d->symbols[i];
        size_t name_len = strlen(m->name);
        if (name_len == 0 || name_len > MD_DIR_NAME_MAX) {
            rc = fail(why, "symbol name not 1..8 printable ASCII characters", -EINVAL);
            goto done;
        }
        s->locate = m->locate;
        memcpy(s->name, m->name, name_len + 1);
        s->channel = m->channel;
    }
    d->n_channels = (uint32_t)msg->n_channels;
    d->n_symbols = (uint32_t)msg->n_symbols;
    rc = md_dir_check(d, why);
done:
    if (rc < 0)
        d->n_channels = d->n_symbols = 0;
    rdps__md__symbol_directory__free_unpacked(msg, NULL);
    return rc;
}
