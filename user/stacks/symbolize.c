// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>
#include "array.h"
#include "stacks/symbolize.h"
#include "stacks/target_code.h"

struct sym_proc {
	pid_t pid;
	Dwfl *dwfl;		/* NULL: /proc/PID/maps could not be read */
	bool refreshed;		/* re-reported since the last address that fit no module */
};

struct symbolizer {
	struct sym_proc *procs;
	size_t nprocs, capprocs;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
};

int symbolizer_new(struct symbolizer **out)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->cb.find_elf = dwfl_linux_proc_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = &s->debuginfo_path;
	*out = s;
	return 0;
}

void symbolizer_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].dwfl)
			dwfl_end(s->procs[i].dwfl);
	free(s->procs);
	free(s);
}

/* Each file mapped by p, at the bias of its lowest mapping (start - file offset: where the
 * file's offset 0 would be, which is its load bias for PIE and shared objects). */
static int report_from_model(Dwfl *dwfl, const struct proc *p)
{
	const struct mapping *m, *o;
	int reported = 0;

	for (m = model_first(p); m; m = model_next(m)) {
		bool seen = false;

		if (!m->path || m->kind != MK_FILE)
			continue;
		for (o = model_first(p); o != m && !seen; o = model_next(o))
			seen = o->path && !strcmp(o->path, m->path);
		if (seen || !target_mapping_file_same(m))
			continue;
		if (dwfl_report_elf(dwfl, m->path, m->path, -1,
				    (mapping_start(m) << PAGE_SHIFT_4K) - m->offset, false))
			reported++;
	}
	return reported ? 0 : -ENOENT;
}

static int count_module(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	(*(int *)arg)++;
	return DWARF_CB_OK;
}

static int report(struct symbolizer *s, struct sym_proc *sp, const struct proc *p)
{
	int err = 0, n = 0;

	if (!sp->dwfl) {
		sp->dwfl = dwfl_begin(&s->cb);
		if (!sp->dwfl)
			return -ENOMEM;
	}
	dwfl_report_begin(sp->dwfl);
	if (!p->exited && !dwfl_linux_proc_report(sp->dwfl, sp->pid)) {
		dwfl_report_end(sp->dwfl, NULL, NULL);
		dwfl_getmodules(sp->dwfl, count_module, &n, 0);
		if (n)
			return 0;
		dwfl_report_begin(sp->dwfl);	/* a zombie's maps are empty */
	}
	/* Gone (or going): what the model knew of its layout.  report_begin dropped what
	 * the failed read may have half-reported. */
	dwfl_report_end(sp->dwfl, NULL, NULL);
	dwfl_report_begin(sp->dwfl);
	err = report_from_model(sp->dwfl, p);
	dwfl_report_end(sp->dwfl, NULL, NULL);
	if (err) {
		dwfl_end(sp->dwfl);
		sp->dwfl = NULL;
	}
	return err;
}

static struct sym_proc *find_proc(struct symbolizer *s, const struct proc *p)
{
	pid_t pid = p->pid;
	struct sym_proc *sp;
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (array_reserve(s->procs, s->nprocs, s->capprocs, 8))
		return NULL;
	sp = &s->procs[s->nprocs++];
	memset(sp, 0, sizeof(*sp));
	sp->pid = pid;
	report(s, sp, p);
	sp->refreshed = true;
	return sp;
}

void symbolizer_forget(struct symbolizer *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++) {
		if (s->procs[i].pid != pid)
			continue;
		if (s->procs[i].dwfl)
			dwfl_end(s->procs[i].dwfl);
		s->procs[i] = s->procs[--s->nprocs];
		return;
	}
}

void sym_frame_clear(struct sym_frame *f)
{
	free(f->name);
	free(f->func);
	free(f->module);
	free(f->file);
	memset(f, 0, sizeof(*f));
}

static Dwfl_Module *module_of(struct symbolizer *s, struct sym_proc *sp, const struct proc *p,
			      uint64_t addr)
{
	Dwfl_Module *m = sp->dwfl ? dwfl_addrmodule(sp->dwfl, addr) : NULL;

	if (m || sp->refreshed)
		return m;
	/* A library mapped since the last report (dlopen): read the maps again, once until
	 * an address is found. */
	sp->refreshed = true;
	if (report(s, sp, p))
		return NULL;
	return dwfl_addrmodule(sp->dwfl, addr);
}

int symbolizer_name(struct symbolizer *s, const struct proc *p, uint64_t addr, bool caller,
		    bool anon_exec, struct sym_frame *out)
{
	/* A return address points after the call, maybe past the caller's last byte. */
	uint64_t look = caller && addr ? addr - 1 : addr;
	struct sym_proc *sp = find_proc(s, p);
	Dwfl_Module *m = sp ? module_of(s, sp, p, look) : NULL;
	const char *modname = NULL, *sym = NULL, *file;
	GElf_Off off = 0;
	GElf_Sym esym;
	Dwfl_Line *ln;
	char buf[64];
	int line = 0;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	if (!m) {
		if (anon_exec)
			snprintf(buf, sizeof(buf), "[anon:0x%" PRIx64 "]", addr);
		else
			snprintf(buf, sizeof(buf), "[unknown]");
		out->name = strdup(buf);
		return out->name ? 0 : -ENOMEM;
	}
	if (sp)
		sp->refreshed = false;
	modname = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	sym = dwfl_module_addrinfo(m, look, &off, &esym, NULL, NULL, NULL);
	/* libdwfl falls back to the nearest sizeless symbol below the address (in a stripped
	 * binary: some unrelated _init or exported symbol): only a symbol whose size covers
	 * the address names it. */
	if (sym && (esym.st_size == 0 || off >= esym.st_size))
		sym = NULL;
	if (modname) {
		const char *slash = strrchr(modname, '/');

		out->module = strdup(slash ? slash + 1 : modname);
	}
	if (sym) {
		/* The offset of the sampled address, as perf and gdb print it. */
		off += addr - look;
		out->func = strdup(sym);
		out->func_start = addr - off;
		if (asprintf(&out->name, "%s+0x%" PRIx64, sym, (uint64_t)off) < 0)
			out->name = NULL;
	} else {
		/* A module without a symbol for it (a stripped binary): the function cannot be
		 * known; the module stays in out->module. */
		out->name = strdup("[unknown]");
	}
	ln = dwfl_module_getsrc(m, look);
	file = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
	if (file) {
		out->file = strdup(file);
		out->line = line;
	}
	if (!out->name) {
		sym_frame_clear(out);
		return -ENOMEM;
	}
	return 0;
}
