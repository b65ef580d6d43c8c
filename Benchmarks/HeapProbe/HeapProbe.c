// glibc's malloc statistics, which Swift's Glibc module does not export (malloc.h is not in it).
#include "HeapProbe.h"
#include <stdlib.h>  // defines __GLIBC__ where glibc is the C library

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>

long long heap_probe_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
}

long long heap_probe_bytes_from_system(void) {
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.arena + info.hblkhd);
}
#else
long long heap_probe_bytes_in_use(void) { return -1; }
long long heap_probe_bytes_from_system(void) { return -1; }
#endif
