/* docs/kernel-format.md: every "json op" example parses (and validates) on
 * top of the "json prelude" block, so the normative page cannot rot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "fileio.h"
#include "frontend.h"

/* Next fenced block whose info string is `info`; returns a malloc'd copy. */
static char *next_block(const char **cur, const char *info)
{
    char fence[64];
    snprintf(fence, sizeof fence, "```%s\n", info);
    const char *p = strstr(*cur, fence);
    if (!p)
        return NULL;
    p += strlen(fence);
    const char *e = strstr(p, "\n```");
    assert_non_null(e);
    *cur = e + 4;
    size_t n = (size_t)(e - p);
    char *r = malloc(n + 1);
    memcpy(r, p, n);
    r[n] = 0;
    return r;
}

static void test_doc_examples_parse(void **state)
{
    (void)state;
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    if (fio_read_all(TPB_SOURCE_DIR "/docs/kernel-format.md", &buf, &len, &err))
        fail_msg("%s", err.msg);
    char *doc = realloc(buf, len + 1);
    doc[len] = 0;
    const char *cur = doc;
    char *prelude = next_block(&cur, "json prelude");
    assert_non_null(prelude);
    int n = 0;
    const char *ops = doc;
    char *snip;
    while ((snip = next_block(&ops, "json op"))) {
        cJSON *k = cJSON_Parse(prelude);
        assert_non_null(k);
        cJSON *op = cJSON_Parse(snip);
        if (!op)
            fail_msg("doc example %d is not JSON: %s", n, snip);
        cJSON_AddItemToArray(cJSON_GetObjectItem(k, "body"), op);
        char *text = cJSON_PrintUnformatted(k);
        tir_kernel_t tk;
        if (enc_parse_kernel_json(text, strlen(text), "doc.json", TPB_SOURCE_DIR "/docs", NULL, 0,
                                  &tk, &err))
            fail_msg("doc example %d fails: %s\n%s", n, err.msg, snip);
        assert_true(tk.nops >= 1);
        tir_kernel_free(&tk);
        free(text);
        cJSON_Delete(k);
        free(snip);
        n++;
    }
    /* one example per op kind at least */
    assert_true(n >= 40);
    free(prelude);
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_examples_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
