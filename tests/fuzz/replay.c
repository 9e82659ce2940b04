// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer over what reads a trace file, which travels in bug reports and
 * is untrusted: the reader (header, blocks, zlib, record validation), the
 * model fed every record, the verdicts, the reports (text, JSON, Prometheus),
 * the event printer of `replay --events`, the Perfetto writer and the
 * pprof and folded writers. An input that starts with the file magic is a trace
 * file; any other is taken as the records of one decompressed block, so that
 * mutations reach the records past the compression and the CRCs. Built by
 * `make .output/tests/fuzz-replay` (clang's -fsanitize=fuzzer,address,
 * undefined); run by tests/fuzz.sh. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stream/dump.h"
#include "model/model.h"
#include "report/perfetto.h"
#include "report/pprof.h"
#include "analysis/findings.h"
#include "report/report.h"
#include "stream/tracefile.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static FILE *null_out(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

static int replay(const unsigned char *data, size_t size, gmt_sink_fn sink, void *ctx,
		  struct replay_result *res)
{
	if (size >= 8 && !memcmp(data, "GMTTRACE", 8))
		return tracefile__replay_buffer(data, size, sink, ctx, res);
	tracefile__feed_records(data, size, sink, ctx, res);
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct report_opts o = { .max_mappings = 10, .timeline_rows = 10 };
	struct dump d = { .out = null_out() };
	struct model *m = model__new();
	struct replay_result res;
	struct findings *fs;
	struct perfetto *pf;
	size_t packets;

	if (!m)
		abort();
	if (!replay(data, size, model__add, m, &res)) {
		o.notes = (const char(*)[160])res.notes;
		o.nr_notes = res.nr_notes;
		fs = findings__build(m);
		report__text(d.out, m, fs, &o);
		report__json(d.out, m, fs, &o);
		report__prometheus(d.out, m, fs);
		findings__free(fs);
		/* replay --pprof and --folded, whole and in a window, into nothing */
		for (int i = 0; i < 6; i++) {
			struct pprof_opts po = { .sample = i % 3, .from = i > 2 ? "0.5" : NULL };
			char err[256];
			int fd = open("/dev/null", O_WRONLY);

			if (fd < 0)
				abort();
			pprof__to(m, &po, fd, i % 2, err, sizeof(err));
		}
	}
	model__free(m);
	replay(data, size, dump__event, &d, &res);
	/* replay --perfetto, into nothing */
	pf = perfetto__to(fopen("/dev/null", "w"));
	if (!pf)
		abort();
	replay(data, size, perfetto__event, pf, &res);
	perfetto__finish(pf, &packets);
	return 0;
}
