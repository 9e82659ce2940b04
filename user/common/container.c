// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container: owns reading a cgroup path as a container's (podman, docker,
 * containerd, cri-o; cgroup v1 and v2, cgroupfs and systemd layouts) and a
 * Kubernetes pod's uid. A process can make cgroups below its own in a
 * delegated subtree, so the path is hostile: only exact shapes count (64
 * lowercase hex digits, a uid of 8-4-4-4-12), the outermost wins (what is
 * below a container's cgroup is the container's to name), and a pod only
 * under a kubepods cgroup at the top (or /kubelet.slice/kubelet-kubepods,
 * as kind nests it). */
#include <string.h>
#include "container.h"

#define ID_HEX 64
#define UID_CHARS 36

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool has_prefix(const char *s, size_t n, const char *pre, size_t *skip)
{
	size_t k = strlen(pre);

	if (n < k || strncmp(s, pre, k))
		return false;
	*skip = k;
	return true;
}

/* the id of a component: "<pre><64 hex>[<suffix>]"; suffix "" or ".scope" */
static bool id_of(const char *s, size_t n, const char *pre, char *id)
{
	size_t k;

	if (!has_prefix(s, n, pre, &k) || n - k < ID_HEX || !is_hex(s + k, ID_HEX))
		return false;
	if (n - k != ID_HEX && (n - k != ID_HEX + 6 || strncmp(s + k + ID_HEX, ".scope", 6)))
		return false;
	memcpy(id, s + k, ID_HEX);
	id[ID_HEX] = 0;
	return true;
}

/* a pod's uid: "pod<uid>[.slice]" (cgroupfs) or "kubepods[-qos]-pod<uid
 * with _ for ->.slice" (systemd) */
static bool uid_of(const char *s, size_t n, char *uid)
{
	const char *u;
	size_t i, k;
	char sep = '-';

	if (has_prefix(s, n, "pod", &k)) {
		u = s + k;
	} else if ((has_prefix(s, n, "kubepods", &k) || has_prefix(s, n, "kubelet-kubepods", &k)) &&
		   n > 6 && !strncmp(s + n - 6, ".slice", 6)) {
		u = NULL;
		for (i = k; i + 4 <= n; i++)
			if (!strncmp(s + i, "-pod", 4))
				u = s + i + 4; /* the last "-pod": a qos name has none */
		if (!u)
			return false;
		sep = '_';
	} else {
		return false;
	}
	k = s + n - u;
	if (k != UID_CHARS && (k != UID_CHARS + 6 || strncmp(u + UID_CHARS, ".slice", 6)))
		return false;
	if (sep == '_' && k != UID_CHARS + 6)
		return false;
	for (i = 0; i < UID_CHARS; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != sep : !is_hex(u + i, 1))
			return false;
		uid[i] = dash ? '-' : u[i];
	}
	uid[UID_CHARS] = 0;
	return true;
}

bool container__parse(const char *path, struct container *c)
{
	const char *s, *e, *prev = "";
	size_t n, prev_n = 0;
	bool kube = false;
	int depth = 0;
	char id[CONTAINER_ID_LEN], uid[CONTAINER_UID_LEN];

	memset(c, 0, sizeof(*c));
	/* each component, outermost first, up to the container's */
	for (s = path; *s && !c->id[0]; prev = s, prev_n = n, s = *e ? e + 1 : e) {
		e = strchrnul(s, '/');
		n = e - s;
		if (!n)
			continue;
		depth++;
		if ((depth == 1 && !strncmp(s, "kubepods", 8)) ||
		    (depth == 2 && !strncmp(s, "kubelet-kubepods", 16)))
			kube = true;
		if (kube && !c->pod_uid[0] && uid_of(s, n, uid)) {
			memcpy(c->pod_uid, uid, sizeof(uid));
			continue;
		}
		if (id_of(s, n, "libpod-", id))
			c->runtime = "podman";
		else if (id_of(s, n, "docker-", id))
			c->runtime = "docker";
		else if (id_of(s, n, "cri-containerd-", id))
			c->runtime = "containerd";
		else if (id_of(s, n, "crio-", id))
			c->runtime = "cri-o";
		else if (id_of(s, n, "", id) && prev_n == 6 && !strncmp(prev, "docker", 6))
			c->runtime = "docker"; /* /docker/<id> */
		else if (id_of(s, n, "", id) && c->pod_uid[0])
			c->runtime = "containerd"; /* /kubepods/<qos>/pod<uid>/<id> */
		else
			continue;
		memcpy(c->id, id, sizeof(id));
	}
	return c->id[0] || c->pod_uid[0];
}

bool container__name_ok(const char *s, size_t n, bool dots)
{
	size_t i;

	if (!n || n > (dots ? 253 : 63))
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      (dots && s[i] == '.')))
			return false;
	return true;
}
