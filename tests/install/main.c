#include <memlake/memlake.h>
#include <stdio.h>
int main(void) {
  memlake_options* o; memlake_options_create(&o, 1); memlake_options_set(o, "backend", "host");
  memlake_allocator* a; if (memlake_create(o, &a) != MEMLAKE_OK) { printf("%s\n", memlake_last_error()); return 1; }
  void* p; memlake_alloc(a, 64 << 20, 0, NULL, &p);
  memlake_stats s = {.struct_size = sizeof s}; memlake_get_stats(a, 0, &s);
  printf("reserved %llu\n", (unsigned long long)s.reserved_bytes.current);
  memlake_free(a, p, 0, NULL); memlake_destroy(a); memlake_options_destroy(o); return 0;
}
