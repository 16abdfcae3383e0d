/* Built against an installed kupl: copies a buffer asynchronously and checks it. */
#include <kupl.h>
#include <kupl_ext.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    enum { N = 1 << 20 };
    static unsigned char src[N], dst[N];
    for (int i = 0; i < N; ++i)
        src[i] = (unsigned char)(i * 13 + 5);
    kupl_queue_h q = kupl_queue_create();
    kupl_event_h e = kupl_event_create();
    if (!q || !e || kupl_memcpy_async(dst, src, N, q, e) != KUPL_OK || kupl_event_wait(e) != KUPL_OK) {
        fprintf(stderr, "consumer: kupl calls failed\n");
        return 1;
    }
    if (memcmp(dst, src, N) != 0) {
        fprintf(stderr, "consumer: copied bytes differ\n");
        return 1;
    }
    kupl_version_t v;
    kupl_get_version(&v);
    printf("consumer: installed %s %s copied %d bytes\n", v.component_name, v.component_version, N);
    kupl_event_destroy(e);
    kupl_queue_destroy(q);
    return 0;
}
