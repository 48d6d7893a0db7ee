// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include "lib/array.h"
#include "stacks/symbolize.h"
#include "stacks/target_code.h"

#define FILES_MAX 4096		/* ELF files kept open; past it, new ones go unnamed */

/* One ELF file, opened once for every process that maps it. */
struct sym_file {
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	Dwfl *dwfl;		/* NULL: not readable as ELF (or no longer the mapped file) */
	Dwfl_Module *mod;
};

struct symbolizer {
	struct sym_file *files;
	size_t nfiles, capfiles;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	Elf *vdso;		/* mevitop's own vDSO image, or NULL */
	size_t vdso_len;
};

/* The vDSO is not a file: its image is in memory; mevitop's is the one every process of
 * this kernel has.  Its extent is that of its PT_LOAD segment. */
static Elf *open_own_vdso(size_t *len)
{
	char *base = (char *)getauxval(AT_SYSINFO_EHDR);
	GElf_Ehdr eh;
	GElf_Phdr ph;
	Elf *e;
	size_t i, n = 0;

	if (!base)
		return NULL;
	/* elf_memory needs the size: the program headers give it. */
	e = elf_memory(base, 1 << 20);
	if (!e || !gelf_getehdr(e, &eh)) {
		if (e)
			elf_end(e);
		return NULL;
	}
	for (i = 0; i < eh.e_phnum; i++)
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > n)
			n = ph.p_offset + ph.p_filesz;
	elf_end(e);
	*len = n;
	return n ? elf_memory(base, n) : NULL;
}

int symbolize_new(struct symbolizer **out)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	s->vdso = open_own_vdso(&s->vdso_len);
	*out = s;
	return 0;
}

void symbolize_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles; i++)
		if (s->files[i].dwfl)
			dwfl_end(s->files[i].dwfl);
	free(s->files);
	if (s->vdso)
		elf_end(s->vdso);
	free(s);
}

void symbolize_frame_clear(struct sym_frame *f)
{
	free(f->name);
	free(f->func);
	free(f->module);
	free(f->file);
	memset(f, 0, sizeof(*f));
}

static bool is_elf(const char *path)
{
	char magic[SELFMAG];
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fread(magic, 1, SELFMAG, f) == SELFMAG && !memcmp(magic, ELFMAG, SELFMAG);
	fclose(f);
	return ok;
}

static struct sym_file *file_of(struct symbolizer *s, const struct proc *p,
			       const struct mapping *m)
{
	char path[TARGET_PATH_MAX];
	struct sym_file *f;
	size_t i;

	for (i = 0; i < s->nfiles; i++) {
		f = &s->files[i];
		if (f->ino == m->ino && f->dev_major == m->dev_major && f->dev_minor == m->dev_minor)
			return f;
	}
	if (s->nfiles >= FILES_MAX || array_reserve(s->files, s->nfiles, s->capfiles, 16))
		return NULL;
	f = &s->files[s->nfiles++];
	memset(f, 0, sizeof(*f));
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	f->ino = m->ino;
	if (!target_code_mapping_file_path(p, m, path, sizeof(path)) || !is_elf(path))
		return f;
	f->dwfl = dwfl_begin(&s->cb);
	if (!f->dwfl)
		return f;
	dwfl_report_begin(f->dwfl);
	/* Base 0: the module sits at the ELF's own addresses. */
	f->mod = dwfl_report_elf(f->dwfl, m->path, path, -1, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
	}
	return f;
}

/* The ELF address of file offset `off`, through the PT_LOAD that maps it. */
static bool elf_addr_of(Elf *e, uint64_t off, uint64_t *out)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t i;

	if (!gelf_getehdr(e, &eh))
		return false;
	for (i = 0; i < eh.e_phnum; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*out = ph.p_vaddr + (off - ph.p_offset);
			return true;
		}
	}
	return false;
}

static int set_name(struct sym_frame *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int set_name(struct sym_frame *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&out->name, fmt, ap);
	va_end(ap);
	if (n < 0)
		out->name = NULL;
	return out->name ? 0 : -ENOMEM;
}

/* A symbol whose extent covers `at` (libdwfl would otherwise fall back to the nearest
 * sizeless symbol below: in a stripped binary, some unrelated _init or export). */
static const char *covering(const char *sym, const GElf_Sym *es, GElf_Off off)
{
	return sym && es->st_size && off < es->st_size ? sym : NULL;
}

static int name_vdso(struct symbolizer *s, uint64_t addr, uint64_t look, uint64_t off,
		     struct sym_frame *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t vaddr;

	out->module = strdup("[vdso]");
	if (!s->vdso || !elf_addr_of(s->vdso, off, &vaddr))
		return set_name(out, "[unknown]");
	while ((scn = elf_nextscn(s->vdso, scn))) {
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); i++) {
			GElf_Sym es;
			const char *nm;

			if (!gelf_getsym(d, i, &es) || GELF_ST_TYPE(es.st_info) != STT_FUNC ||
			    vaddr < es.st_value || vaddr - es.st_value >= es.st_size)
				continue;
			nm = elf_strptr(s->vdso, sh.sh_link, es.st_name);
			if (!nm)
				continue;
			out->func = strdup(nm);
			out->func_start = look - (vaddr - es.st_value);
			if (asprintf(&out->name, "%s+0x%" PRIx64, nm, addr - out->func_start) < 0)
				out->name = NULL;
			return out->name ? 0 : -ENOMEM;
		}
	}
	return set_name(out, "[unknown]");
}

int symbolize_name(struct symbolizer *s, const struct proc *p, uint64_t addr, bool caller,
		   struct sym_frame *out)
{
	/* A return address points after the call, maybe past the caller's last byte. */
	uint64_t look = caller && addr ? addr - 1 : addr, off, vaddr, bias;
	const struct mapping *m = model_find(p, look >> PAGE_SHIFT_4K);
	const char *sym, *file;
	struct sym_file *f;
	GElf_Off soff = 0;
	GElf_Sym es;
	Dwfl_Line *ln;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	if (!m)
		return set_name(out, "[unknown]");
	off = look - (mapping_start(m) << PAGE_SHIFT_4K);
	if (m->kind == MK_VDSO)
		return name_vdso(s, addr, look, off, out);
	if (!m->path || m->kind != MK_FILE)
		return (m->perms & MP_EXEC) && !m->path ? set_name(out, "[anon:0x%" PRIx64 "]", addr)
						       : set_name(out, "[unknown]");
	if (m->path[0] == '/') {
		const char *slash = strrchr(m->path, '/');

		out->module = strndup(slash + 1, strcspn(slash + 1, " "));
	}
	f = file_of(s, p, m);
	elf = f && f->mod ? dwfl_module_getelf(f->mod, &bias) : NULL;
	if (!elf || !elf_addr_of(elf, m->offset + off, &vaddr))
		return set_name(out, "[unknown]");
	vaddr += bias;
	sym = covering(dwfl_module_addrinfo(f->mod, vaddr, &soff, &es, NULL, NULL, NULL), &es, soff);
	if (!sym)
		return set_name(out, "[unknown]");
	soff += addr - look;	/* the sampled address's offset, as perf and gdb print it */
	out->func = strdup(sym);
	out->func_start = addr - soff;
	if (asprintf(&out->name, "%s+0x%" PRIx64, sym, (uint64_t)soff) < 0)
		out->name = NULL;
	ln = dwfl_module_getsrc(f->mod, vaddr);
	file = ln ? dwfl_lineinfo(ln, NULL, &out->line, NULL, NULL, NULL) : NULL;
	if (file)
		out->file = strdup(file);
	if (!out->name || !out->func) {
		symbolize_frame_clear(out);
		return -ENOMEM;
	}
	return 0;
}
