#ifndef HEAP_PROBE_H
#define HEAP_PROBE_H

/// Bytes the C heap has handed out and not had back (glibc's mallinfo2: arena blocks in use plus
/// mmapped blocks), or -1 where the C library cannot tell. For the soak: it separates memory the
/// process really holds from memory malloc keeps in its free lists (fragmentation).
long long heap_probe_bytes_in_use(void);

/// Bytes malloc holds from the system (arenas plus mmapped blocks), or -1.
long long heap_probe_bytes_from_system(void);

#endif
