// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench/floor: puts floor.bpf.o's empty programs on functions of a library
 * for one process, says "attached", and waits until stdin closes.
 *   floor OBJ PID LIBRARY FUNC... */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
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
	if (!obj || bpf_object__load(obj))
		return 1;
	enter = bpf_object__find_program_by_name(obj, "floor_enter");
	ret = bpf_object__find_program_by_name(obj, "floor_return");
	for (i = 4; i < argc; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = argv[i]);

		if (!bpf_program__attach_uprobe_opts(enter, atoi(argv[2]), argv[3], 0, &o))
			return 1;
		o.retprobe = true;
		if (!bpf_program__attach_uprobe_opts(ret, atoi(argv[2]), argv[3], 0, &o))
			return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
