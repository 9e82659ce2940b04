// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Real TTM traffic for the VM tests: on /dev/dri/card0 (bochs, whose VRAM
 * is small), make N dumb buffers the size of the screen, a framebuffer on
 * each, and show them in turn with SETCRTC. Scanout pins a buffer in VRAM;
 * once VRAM is full, showing the next one makes TTM evict others to system
 * memory. Prints what it made as JSON.
 *   drmflip [--buffers N] [--rounds R] [--out FILE] */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <libdrm/drm.h>
#include <libdrm/drm_mode.h>

#define MAX_BUFS 32

static int fd;

static void xioctl(unsigned long req, void *arg, const char *what)
{
	while (ioctl(fd, req, arg)) {
		if (errno == EINTR)
			continue;
		fprintf(stderr, "drmflip: %s: %s\n", what, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct drm_mode_create_dumb dumb[MAX_BUFS];
	__u32 fb[MAX_BUFS], conns[8], crtcs[8], encs[8];
	struct drm_mode_modeinfo modes[64];
	struct drm_mode_card_res res = {};
	struct drm_mode_get_connector conn = {};
	int nbufs = 6, rounds = 3, i, r, flips = 0;
	const char *out = NULL;
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--buffers") && i + 1 < argc)
			nbufs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: drmflip [--buffers N] [--rounds R] [--out FILE]\n");
			return 2;
		}
	}
	if (nbufs < 1 || nbufs > MAX_BUFS)
		return 2;
	fd = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("drmflip: /dev/dri/card0");
		return 1;
	}
	xioctl(DRM_IOCTL_SET_MASTER, NULL, "SET_MASTER");
	res.connector_id_ptr = (uintptr_t)conns;
	res.crtc_id_ptr = (uintptr_t)crtcs;
	res.encoder_id_ptr = (uintptr_t)encs;
	res.count_connectors = res.count_crtcs = res.count_encoders = 8;
	xioctl(DRM_IOCTL_MODE_GETRESOURCES, &res, "GETRESOURCES");
	if (!res.count_connectors || !res.count_crtcs) {
		fprintf(stderr, "drmflip: no connector or CRTC\n");
		return 1;
	}
	conn.connector_id = conns[0];
	conn.modes_ptr = (uintptr_t)modes;
	conn.count_modes = 64;
	xioctl(DRM_IOCTL_MODE_GETCONNECTOR, &conn, "GETCONNECTOR");
	if (!conn.count_modes) {
		fprintf(stderr, "drmflip: the connector has no mode\n");
		return 1;
	}
	for (i = 0; i < nbufs; i++) {
		struct drm_mode_fb_cmd2 cmd = {};

		dumb[i] = (struct drm_mode_create_dumb){ .width = modes[0].hdisplay,
							 .height = modes[0].vdisplay,
							 .bpp = 32 };
		xioctl(DRM_IOCTL_MODE_CREATE_DUMB, &dumb[i], "CREATE_DUMB");
		cmd.width = dumb[i].width;
		cmd.height = dumb[i].height;
		cmd.pixel_format = 0x34325258; /* DRM_FORMAT_XRGB8888 */
		cmd.handles[0] = dumb[i].handle;
		cmd.pitches[0] = dumb[i].pitch;
		xioctl(DRM_IOCTL_MODE_ADDFB2, &cmd, "ADDFB2");
		fb[i] = cmd.fb_id;
	}
	/* each SETCRTC pins the new buffer in VRAM and unpins the old one */
	for (r = 0; r < rounds; r++)
		for (i = 0; i < nbufs; i++, flips++) {
			struct drm_mode_crtc c = { .set_connectors_ptr = (uintptr_t)&conns[0],
						   .count_connectors = 1,
						   .crtc_id = crtcs[0],
						   .fb_id = fb[i],
						   .mode_valid = 1,
						   .mode = modes[0] };

			xioctl(DRM_IOCTL_MODE_SETCRTC, &c, "SETCRTC");
		}
	f = out ? fopen(out, "w") : stdout;
	if (!f)
		return 1;
	fprintf(f,
		"{\"pid\": %d, \"buffers\": %d, \"flips\": %d, \"size\": %llu, \"width\": %u, "
		"\"height\": %u}\n",
		getpid(), nbufs, flips, (unsigned long long)dumb[0].size, dumb[0].width,
		dumb[0].height);
	if (f != stdout)
		fclose(f);
	return 0;
}
