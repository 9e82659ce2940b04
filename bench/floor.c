// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench/floor: puts floor.bpf.o's empty programs on functions of a library
 * for one process, says "attached", and waits until stdin closes. A FUNC
 * ending in ":entry" gets the entry program alone, as gpumemtrace probes it;
 * "tp:CATEGORY:NAME" an empty tracepoint program that tests the pid.
 *   floor OBJ PID LIBRARY|- FUNC[:entry]|tp:CATEGORY:NAME... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *enter, *ret;
	char c;
	int i;

	if (argc < 5) {
		fprintf(stderr, "usage: floor OBJ PID LIBRARY FUNC...\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "floor: cannot open %s\n", argv[1]);
		return 1;
	}
	bpf_map__set_initial_value(bpf_object__find_map_by_name(obj, ".rodata"),
				   &(__u32){ atoi(argv[2]) }, sizeof(__u32));
	if (bpf_object__load(obj)) {
		fprintf(stderr, "floor: cannot load %s\n", argv[1]);
		return 1;
	}
	enter = bpf_object__find_program_by_name(obj, "floor_enter");
	ret = bpf_object__find_program_by_name(obj, "floor_return");
	for (i = 4; i < argc; i++) {
		char *entry = strstr(argv[i], ":entry"), *tp = argv[i] + 3, *name;
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = argv[i]);

		if (!strncmp(argv[i], "tp:", 3) && (name = strchr(tp, ':'))) {
			*name++ = 0;
			if (!bpf_program__attach_tracepoint(
				    bpf_object__find_program_by_name(obj, "floor_tp"), tp, name))
				goto fail;
			continue;
		}
		if (entry)
			*entry = 0;
		if (!bpf_program__attach_uprobe_opts(enter, atoi(argv[2]), argv[3], 0, &o))
			goto fail;
		if (entry)
			continue;
		o.retprobe = true;
		if (!bpf_program__attach_uprobe_opts(ret, atoi(argv[2]), argv[3], 0, &o))
			goto fail;
	}
	printf("attached\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
fail:
	fprintf(stderr, "floor: cannot attach to %s in %s\n", argv[i], argv[3]);
	return 1;
}
