/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_directory.c - the symbol directory: 8 000-symbol round trip, its size, and every rule
 * md_dir_check enforces, on encode and on decode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md.pb-c.h"
#include "md_directory.h"

#define N_SYMBOLS  8000
#define N_CHANNELS 8

struct fixture {
    struct md_dir_channel channels[N_CHANNELS];
    struct md_dir_symbol symbols[N_SYMBOLS];
    struct md_dir dir;
};

static struct fixture *make_directory(void)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    for (uint32_t c = 0; c < N_CHANNELS; c++) {
        struct md_dir_channel *ch = &f->channels[N_CHANNELS - 1 - c]; /* any order */
        ch->channel = c;
        snprintf(ch->topic, sizeof(ch->topic), "md.itch.%u", c);
        memcpy(ch->session, "DEMO000001", MD_SESSION_LEN);
        ch->session[9] = (char)('0' + c);
        ch->intended_times = c % 2 == 0;
        ch->max_msg_len = 50;
    }
    for (uint32_t i = 0; i < N_SYMBOLS; i++) {
        struct md_dir_symbol *s = &f->symbols[i];
        s->locate = i + 1;
        /* Names like ITCH's: up to 8 characters, some with a space or a dot inside. */
        if (i % 97 == 0)
            snprintf(s->name, sizeof(s->name), "B%u A", i);
        else if (i % 89 == 0)
            snprintf(s->name, sizeof(s->name), "Z.%u", i);
        else
            snprintf(s->name, sizeof(s->name), "S%07u", i);
        s->channel = (i * 7) % N_CHANNELS;
    }
    f->dir = (struct md_dir){.channel_count = N_CHANNELS,
                             .channels = f->channels,
                             .n_channels = N_CHANNELS,
                             .symbols = f->symbols,
                             .n_symbols = N_SYMBOLS};
    return f;
}

static void test_roundtrip_8000_symbols(void **state)
{
    (void)state;
    struct fixture *f = make_directory();
    uint8_t *buf;
    size_t len;
    assert_int_equal(md_dir_encode(&f->dir, &buf, &len), 0);
    /* md.proto says 134 KB for 8 000 symbols (about 17 bytes each). */
    assert_true(len > 8000 * 10 && len < 140000);
    struct fixture *out = calloc(1, sizeof(*out));
    assert_non_null(out);
    out->dir.channels = out->channels;
    out->dir.symbols = out->symbols;
    const char *why = NULL;
    assert_int_equal(md_dir_decode(buf, len, &out->dir, N_CHANNELS, N_SYMBOLS, &why), 0);
    assert_int_equal(out->dir.channel_count, N_CHANNELS);
    assert_int_equal(out->dir.n_channels, N_CHANNELS);
    assert_int_equal(out->dir.n_symbols, N_SYMBOLS);
    for (uint32_t c = 0; c < N_CHANNELS; c++) {
        const struct md_dir_channel *a = &f->channels[c], *b = &out->channels[c];
        assert_int_equal(a->channel, b->channel);
        assert_string_equal(a->topic, b->topic);
        assert_memory_equal(a->session, b->session, MD_SESSION_LEN);
        assert_int_equal(a->intended_times, b->intended_times);
        assert_int_equal(a->max_msg_len, b->max_msg_len);
    }
    for (uint32_t i = 0; i < N_SYMBOLS; i++) {
        assert_int_equal(f->symbols[i].locate, out->symbols[i].locate);
        assert_string_equal(f->symbols[i].name, out->symbols[i].name);
        assert_int_equal(f->symbols[i].channel, out->symbols[i].channel);
    }
    /* Arrays too small for it. */
    assert_int_equal(md_dir_decode(buf, len, &out->dir, N_CHANNELS, N_SYMBOLS - 1, &why), -ENOSPC);
    assert_int_equal(out->dir.n_symbols, 0);
    assert_int_equal(md_dir_decode(buf, len, &out->dir, N_CHANNELS - 1, N_SYMBOLS, &why), -ENOSPC);
    free(buf);
    free(out);
    free(f);
}

/* Each rule broken once: encode refuses it, and so does decode of the same message built by
 * hand (protobuf-c directly, as another feed would). */
static void expect_invalid(struct fixture *f, const char *expect_why)
{
    uint8_t *buf;
    size_t len;
    const char *why = NULL;
    assert_int_equal(md_dir_check(&f->dir, &why), -EINVAL);
    assert_non_null(why);
    if (strstr(why, expect_why) == NULL)
        fail_msg("expected '%s', got '%s'", expect_why, why);
    assert_int_equal(md_dir_encode(&f->dir, &buf, &len), -EINVAL);
    assert_null(buf);

    Rdps__Md__SymbolDirectory msg = RDPS__MD__SYMBOL_DIRECTORY__INIT;
    Rdps__Md__Channel ch[N_CHANNELS + 1], *chp[N_CHANNELS + 1];
    Rdps__Md__Symbol *sym = calloc(N_SYMBOLS, sizeof(*sym));
    Rdps__Md__Symbol **symp = calloc(N_SYMBOLS, sizeof(*symp));
    assert_true(sym && symp);
    for (uint32_t i = 0; i < f->dir.n_channels; i++) {
        rdps__md__channel__init(&ch[i]);
        ch[i].channel = f->channels[i].channel;
        ch[i].topic = f->channels[i].topic;
        ch[i].session.data = (uint8_t *)f->channels[i].session;
        ch[i].session.len = MD_SESSION_LEN;
        ch[i].max_msg_len = f->channels[i].max_msg_len;
        chp[i] = &ch[i];
    }
    for (uint32_t i = 0; i < f->dir.n_symbols; i++) {
        rdps__md__symbol__init(&sym[i]);
        sym[i].locate = f->symbols[i].locate;
        sym[i].name = f->symbols[i].name;
        sym[i].channel = f->symbols[i].channel;
        symp[i] = &sym[i];
    }
    msg.channel_count = f->dir.channel_count;
    msg.n_channels = f->dir.n_channels;
    msg.channels = chp;
    msg.n_symbols = f->dir.n_symbols;
    msg.symbols = symp;
    len = rdps__md__symbol_directory__get_packed_size(&msg);
    buf = malloc(len);
    assert_non_null(buf);
    rdps__md__symbol_directory__pack(&msg, buf);
    struct fixture *out = calloc(1, sizeof(*out));
    assert_non_null(out);
    out->dir.channels = out->channels;
    out->dir.symbols = out->symbols;
    why = NULL;
    assert_int_equal(md_dir_decode(buf, len, &out->dir, N_CHANNELS + 1, N_SYMBOLS, &why), -EINVAL);
    assert_non_null(strstr(why, expect_why));
    assert_int_equal(out->dir.n_symbols, 0);
    free(out);
    free(buf);
    free(sym);
    free(symp);
}

static void test_rules(void **state)
{
    (void)state;
    struct fixture *f = make_directory();
    assert_int_equal(md_dir_check(&f->dir, NULL), 0);

    f->symbols[10].locate = 0;
    expect_invalid(f, "locate outside");
    f->symbols[10].locate = 0x10000;
    expect_invalid(f, "locate outside");
    f->symbols[10].locate = 5; /* symbol 4 has it */
    expect_invalid(f, "locate repeated");
    f->symbols[10].locate = 11;

    static const char *bad_names[] = {"", " AB", "AB ", "A\tB", "\x7f"};
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        strcpy(f->symbols[20].name, bad_names[i]);
        expect_invalid(f, "symbol name");
    }
    strcpy(f->symbols[20].name, "OK");

    f->symbols[30].channel = N_CHANNELS;
    expect_invalid(f, "symbol channel");
    f->symbols[30].channel = 0;

    f->channels[2].channel = f->channels[3].channel; /* one twice, one missing */
    expect_invalid(f, "exactly once");
    f->channels[2].channel = N_CHANNELS - 1 - 2;
    f->dir.n_channels = N_CHANNELS - 1;
    expect_invalid(f, "exactly once");
    f->dir.n_channels = N_CHANNELS;
    f->channels[4].topic[0] = '\0';
    expect_invalid(f, "topic");
    strcpy(f->channels[4].topic, "md.itch.x");
    f->channels[5].max_msg_len = 0;
    expect_invalid(f, "max_msg_len");
    f->channels[5].max_msg_len = 0x10000;
    expect_invalid(f, "max_msg_len");
    f->channels[5].max_msg_len = 50;
    f->dir.channel_count = 0;
    f->dir.n_channels = 0;
    expect_invalid(f, "channel_count");
    f->dir.channel_count = N_CHANNELS;
    f->dir.n_channels = N_CHANNELS;
    assert_int_equal(md_dir_check(&f->dir, NULL), 0);
    free(f);
}

static void test_decode_garbage(void **state)
{
    (void)state;
    struct md_dir_channel ch[2];
    struct md_dir_symbol sym[2];
    struct md_dir d = {.channels = ch, .symbols = sym};
    const char *why = NULL;
    static const uint8_t junk[] = {0x0A, 0x80}; /* field 1, length-delimited, length cut off */
    assert_int_equal(md_dir_decode(junk, sizeof(junk), &d, 2, 2, &why), -EBADMSG);
    assert_int_equal(md_dir_decode(junk, MD_DIR_MAX_BYTES + 1, &d, 2, 2, &why), -EMSGSIZE);
    /* A session that is not 10 bytes. */
    Rdps__Md__SymbolDirectory msg = RDPS__MD__SYMBOL_DIRECTORY__INIT;
    Rdps__Md__Channel c = RDPS__MD__CHANNEL__INIT, *cp = &c;
    c.topic = (char *)"md.0";
    c.session.data = (uint8_t *)"SHORT";
    c.session.len = 5;
    c.max_msg_len = 50;
    msg.channel_count = 1;
    msg.n_channels = 1;
    msg.channels = &cp;
    uint8_t buf[256];
    size_t len = rdps__md__symbol_directory__pack(&msg, buf);
    assert_int_equal(md_dir_decode(buf, len, &d, 2, 2, &why), -EINVAL);
    assert_non_null(strstr(why, "session"));
    c.session.data = (uint8_t *)"TENBYTES!!";
    c.session.len = 10;
    len = rdps__md__symbol_directory__pack(&msg, buf);
    assert_int_equal(md_dir_decode(buf, len, &d, 2, 2, &why), 0);
    assert_int_equal(d.n_channels, 1);
    assert_int_equal(d.n_symbols, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_8000_symbols),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_decode_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
