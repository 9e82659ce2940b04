// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel GPU buffers through TTM, the memory manager of amdgpu, radeon,
 * nouveau, bochs, qxl, vmwgfx...: creation (owner), every move between VRAM,
 * GTT and system memory (with the evict flag and the task that caused it),
 * release. fentry/fexit on module functions found in the ttm module's BTF. */
#include "gmt.bpf.h"

/* only the fields used, relocated against the running kernel's ttm/drm BTF */
struct drm_gem_object {
	size_t size;
} __attribute__((preserve_access_index));

struct ttm_resource {
	__u32 mem_type;
} __attribute__((preserve_access_index));

struct ttm_place {
	__u32 mem_type;
} __attribute__((preserve_access_index));

struct ttm_buffer_object {
	struct drm_gem_object base;
	struct kref kref;
	struct ttm_resource *resource;
	void (*destroy)(struct ttm_buffer_object *);
} __attribute__((preserve_access_index));

/* amdgpu: its buffers and the VM (process) they are mapped into. The task
 * info was embedded in the VM up to 6.9 and is a pointer since. */
struct amdgpu_task_info {
	int tgid;
} __attribute__((preserve_access_index));

struct amdgpu_vm___embedded {
	struct amdgpu_task_info task_info;
} __attribute__((preserve_access_index));

struct amdgpu_vm___pointer {
	struct amdgpu_task_info *task_info;
} __attribute__((preserve_access_index));

struct amdgpu_vm;

struct amdgpu_vm_bo_base {
	struct amdgpu_vm *vm;
} __attribute__((preserve_access_index));

struct amdgpu_bo {
	struct ttm_buffer_object tbo;
	struct amdgpu_vm_bo_base *vm_bo;
} __attribute__((preserve_access_index));

struct trace_event_raw_amdgpu_bo_create {
	struct amdgpu_bo *bo;
	__u32 prefer;
	__u32 allow;
	__u32 visible; /* the buffer's AMDGPU_GEM_CREATE_* flags */
} __attribute__((preserve_access_index));

struct trace_event_raw_amdgpu_bo_move {
	struct amdgpu_bo *bo;
	__u32 new_placement;
	__u32 old_placement;
} __attribute__((preserve_access_index));

GMT_SHARED const volatile __u32 all_bos; /* -a: every process's buffers */
/* amdgpu_bo_destroy and amdgpu_bo_user_destroy, from kallsyms: a buffer
 * with either as its destroy callback is amdgpu's */
const volatile __u64 amdgpu_destroy[2];

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);   /* bo */
	__type(value, __u32); /* owner tgid */
} bo_owner SEC(".maps");

/* per thread: the placement a move starts from, and the eviction under way */
struct move_ctx {
	__s32 from;
	__u32 evict_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct move_ctx);
} moving SEC(".maps");

static __always_inline __u32 owner_of(struct ttm_buffer_object *bo)
{
	__u64 key = (__u64)bo;
	__u32 *o = bpf_map_lookup_elem(&bo_owner, &key);

	return o ? *o : 0;
}

static __always_inline bool is_amdgpu(struct ttm_buffer_object *bo)
{
	__u64 destroy;

	if (!amdgpu_destroy[0])
		return false;
	destroy = (__u64)BPF_CORE_READ(bo, destroy);
	return destroy == amdgpu_destroy[0] || destroy == amdgpu_destroy[1];
}

/* the process whose GPU VM an amdgpu buffer belongs to: the owner of a
 * buffer made before tracing began */
static __always_inline __u32 amdgpu_vm_owner(struct ttm_buffer_object *bo)
{
	struct amdgpu_vm_bo_base *vb;
	struct amdgpu_task_info *ti;
	struct amdgpu_bo *abo;
	void *vm;

	if (!bpf_core_type_exists(struct amdgpu_bo) || !is_amdgpu(bo))
		return 0;
	abo = (void *)((char *)bo - bpf_core_field_offset(struct amdgpu_bo, tbo));
	vb = BPF_CORE_READ(abo, vm_bo);
	vm = vb ? BPF_CORE_READ(vb, vm) : NULL;
	if (!vm)
		return 0;
	if (bpf_core_field_exists(((struct amdgpu_vm___pointer *)0)->task_info)) {
		ti = BPF_CORE_READ((struct amdgpu_vm___pointer *)vm, task_info);
		return ti ? BPF_CORE_READ(ti, tgid) : 0;
	}
	return BPF_CORE_READ((struct amdgpu_vm___embedded *)vm, task_info.tgid);
}

static __always_inline bool wanted(__u32 owner)
{
	return all_bos || (owner && gmt_is_target(owner)) ||
	       gmt_is_target(bpf_get_current_pid_tgid() >> 32);
}

static __always_inline void emit(struct ttm_buffer_object *bo, __u32 op, __s32 from, __s32 to,
				 __u32 evict, __u32 owner, __u32 evict_id)
{
	struct gmt_bo *e = gmt_reserve(sizeof(*e), GMT_EV_BO, GMT_SRC_BO);

	if (!e)
		return;
	e->bo = (__u64)bo;
	e->size = BPF_CORE_READ(bo, base.size);
	e->op = op;
	e->from = from;
	e->to = to;
	e->evict = evict;
	e->owner = owner;
	e->evict_id = evict_id;
	e->prefer = e->allowed = e->amdgpu_flags = 0;
	e->flags = is_amdgpu(bo) ? GMT_BOF_AMDGPU : 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	gmt_submit(e);
}

/* a buffer's first resource is its creation: ttm_bo_init_reserved itself
 * takes more arguments than the trampolines of older kernels allow */
SEC("fentry/ttm_resource_alloc")
int BPF_PROG(ttm_create, struct ttm_buffer_object *bo, const struct ttm_place *place)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 key = (__u64)bo;

	if (BPF_CORE_READ(bo, resource))
		return 0; /* a move's new resource */
	bpf_map_update_elem(&bo_owner, &key, &tgid, BPF_ANY);
	if (wanted(tgid))
		emit(bo, GMT_BO_CREATE, GMT_PL_NONE, BPF_CORE_READ(place, mem_type), 0, tgid, 0);
	return 0;
}

SEC("fentry/ttm_bo_handle_move_mem")
int BPF_PROG(ttm_move_enter, struct ttm_buffer_object *bo, struct ttm_resource *mem, bool evict)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ttm_resource *old = BPF_CORE_READ(bo, resource);
	struct move_ctx *c = bpf_map_lookup_elem(&moving, &tid), n = {};

	n.from = old ? BPF_CORE_READ(old, mem_type) : GMT_PL_NONE;
	if (c) {
		c->from = n.from;
		return 0;
	}
	bpf_map_update_elem(&moving, &tid, &n, BPF_ANY);
	return 0;
}

/* at the exit the move is done: a driver may refuse it and ask for a hop */
SEC("fexit/ttm_bo_handle_move_mem")
int BPF_PROG(ttm_move_exit, struct ttm_buffer_object *bo, struct ttm_resource *mem, bool evict,
	     void *ctx_, void *hop, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), owner;
	struct move_ctx *c = bpf_map_lookup_elem(&moving, &tid);
	__s32 from;
	__u32 id;

	if (!c)
		return 0;
	from = c->from;
	id = c->evict_id;
	if (!id)
		bpf_map_delete_elem(&moving, &tid);
	if (ret)
		return 0;
	owner = owner_of(bo);
	if (!owner && (owner = amdgpu_vm_owner(bo))) {
		__u64 key = (__u64)bo;

		bpf_map_update_elem(&bo_owner, &key, &owner, BPF_ANY);
	}
	if (wanted(owner))
		emit(bo, GMT_BO_MOVE, from, BPF_CORE_READ(mem, mem_type), evict || id, owner, id);
	return 0;
}

/* amdgpu says where it wants a buffer it made: preferred, allowed domains */
SEC("tracepoint/amdgpu/amdgpu_bo_create")
int tp_amdgpu_bo_create(struct trace_event_raw_amdgpu_bo_create *ctx)
{
	struct amdgpu_bo *abo = ctx->bo; /* the context is read directly, not probed */
	struct ttm_buffer_object *bo;
	struct gmt_bo *e;

	if (!abo || !wanted(bpf_get_current_pid_tgid() >> 32))
		return 0;
	bo = (void *)((char *)abo + bpf_core_field_offset(struct amdgpu_bo, tbo));
	e = gmt_reserve(sizeof(*e), GMT_EV_BO, GMT_SRC_BO);
	if (!e)
		return 0;
	e->bo = (__u64)bo;
	e->size = BPF_CORE_READ(bo, base.size);
	e->op = GMT_BO_DOMAINS;
	e->from = e->to = GMT_PL_NONE;
	e->evict = e->evict_id = 0;
	e->owner = bpf_get_current_pid_tgid() >> 32;
	e->prefer = ctx->prefer;
	e->allowed = ctx->allow;
	e->amdgpu_flags = ctx->visible;
	e->flags = GMT_BOF_AMDGPU;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	gmt_submit(e);
	return 0;
}

/* an eviction: every move inside it (the hop through GTT too) is one */
static __always_inline void evict_begin(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct move_ctx n = { GMT_PL_NONE, bpf_get_prandom_u32() | 1 };

	bpf_map_update_elem(&moving, &tid, &n, BPF_ANY);
}

static __always_inline void evict_end(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&moving, &tid);
}

SEC("fentry/ttm_mem_evict_first") /* up to 6.8 */
int BPF_PROG(ttm_evict_first_enter)
{
	evict_begin();
	return 0;
}

SEC("fexit/ttm_mem_evict_first")
int BPF_PROG(ttm_evict_first_exit)
{
	evict_end();
	return 0;
}

SEC("fentry/ttm_bo_evict") /* 6.9 and later */
int BPF_PROG(ttm_bo_evict_enter)
{
	evict_begin();
	return 0;
}

SEC("fexit/ttm_bo_evict")
int BPF_PROG(ttm_bo_evict_exit)
{
	evict_end();
	return 0;
}

SEC("fentry/ttm_bo_release")
int BPF_PROG(ttm_release, struct kref *kref)
{
	struct ttm_buffer_object *bo =
		(void *)((char *)kref - bpf_core_field_offset(struct ttm_buffer_object, kref));
	__u64 key = (__u64)bo;
	__u32 owner = owner_of(bo);

	if (wanted(owner))
		emit(bo, GMT_BO_FREE, GMT_PL_NONE, GMT_PL_NONE, 0, owner, 0);
	bpf_map_delete_elem(&bo_owner, &key);
	return 0;
}

/* where fentry is refused (lockdown), amdgpu's own move tracepoint still
 * shows its buffers' moves, without the evict flag: attached only then */
SEC("tracepoint/amdgpu/amdgpu_bo_move")
int tp_amdgpu_bo_move(struct trace_event_raw_amdgpu_bo_move *ctx)
{
	struct amdgpu_bo *abo = ctx->bo;
	struct ttm_buffer_object *bo;
	__u32 owner;

	if (!abo)
		return 0;
	bo = (void *)((char *)abo + bpf_core_field_offset(struct amdgpu_bo, tbo));
	owner = owner_of(bo);
	if (!owner)
		owner = amdgpu_vm_owner(bo);
	if (wanted(owner))
		emit(bo, GMT_BO_MOVE, ctx->old_placement, ctx->new_placement, 0, owner, 0);
	return 0;
}
