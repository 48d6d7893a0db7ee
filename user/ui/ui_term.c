// SPDX-License-Identifier: GPL-2.0
#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>
#include "ui/ui_term.h"

static SCREEN *screen;
static bool mouse_on;
static bool alt_screen;		/* smcup/rmcup: the shell's screen comes back on exit */

/* The crash path's state: filled in before it is armed, read only by the handler. */
static struct termios saved_tio;
static bool have_tio;
static char crash_seq[256];
static size_t crash_len;
static volatile sig_atomic_t crash_armed;
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL };
#define NCRASH (sizeof(crash_signals) / sizeof(crash_signals[0]))
static struct sigaction crash_old[NCRASH];

int term_check(char *why, size_t len)
{
	int err = 0;

	/* The terminal's own size, not LINES/COLUMNS from the environment: where a parent
	 * exported them (bash keeps exported ones current), ncurses takes them at start and
	 * again at every SIGWINCH, and a resize is never seen.  use_tioctl(TRUE) does not
	 * help with ncurses 6.4/6.5 (measured); dropping them does.  Done here, before any
	 * thread exists (unsetenv races with getenv); a command that `mevitop run` starts
	 * asks the terminal too. */
	unsetenv("LINES");
	unsetenv("COLUMNS");

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(why, len, "the interactive view needs a terminal (std%s is not one): "
			 "use --json for machine-readable output",
			 isatty(STDIN_FILENO) ? "out" : "in");
		return -1;
	}
	if (setupterm(NULL, STDOUT_FILENO, &err) != OK) {
		const char *t = getenv("TERM");

		snprintf(why, len, "terminal type '%s' is unknown to terminfo: set TERM (e.g. "
			 "TERM=xterm) or use --json", t && *t ? t : "(unset)");
		return -1;
	}
	if (!tigetstr("cup") || tigetstr("cup") == (char *)-1) {
		snprintf(why, len, "terminal type '%s' cannot move the cursor: the interactive view "
			 "needs one that can (e.g. TERM=xterm), or use --json", getenv("TERM"));
		del_curterm(cur_term);
		return -1;
	}
	del_curterm(cur_term);
	return 0;
}

static void add_seq(const char *cap)
{
	const char *s = tigetstr((char *)cap);
	size_t n;

	if (!s || s == (char *)-1)
		return;
	n = strlen(s);
	if (crash_len + n < sizeof(crash_seq)) {
		memcpy(crash_seq + crash_len, s, n);
		crash_len += n;
	}
}

static void crash_restore(void)
{
	ssize_t unused;

	if (!crash_armed)
		return;
	crash_armed = 0;
	unused = write(STDOUT_FILENO, crash_seq, crash_len);
	(void)unused;
	if (have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void on_crash(int sig, siginfo_t *si, void *ctx)
{
	size_t i;

	(void)ctx;
	crash_restore();
	for (i = 0; i < NCRASH; i++)
		if (crash_signals[i] == sig)
			sigaction(sig, &crash_old[i], NULL);
	/* A fault returns to the faulting instruction, which faults again into the previous
	 * handler with the real fault address; a sent signal (kill, abort) is sent again. */
	if (si->si_code <= 0 || sig == SIGABRT)
		raise(sig);
}

static void crash_arm(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	crash_armed = 1;
	for (i = 0; i < NCRASH; i++)
		sigaction(crash_signals[i], &sa, &crash_old[i]);
}

static void crash_disarm(void)
{
	size_t i;

	crash_armed = 0;
	for (i = 0; i < NCRASH; i++)
		sigaction(crash_signals[i], &crash_old[i], NULL);
}

/* Home and End as terminals send them when TERM names another terminal (TERM=xterm inside
 * tmux or screen is common): sequences this terminal's terminfo does not already bind. */
static void define_keys(void)
{
	static const struct {
		const char *seq;
		int key;
	} keys[] = {
		{ "\033[1~", KEY_HOME }, { "\033[4~", KEY_END }, { "\033[7~", KEY_HOME },
		{ "\033[8~", KEY_END }, { "\033[H", KEY_HOME }, { "\033[F", KEY_END },
		{ "\033OH", KEY_HOME }, { "\033OF", KEY_END },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (key_defined(keys[i].seq) == 0)
			define_key(keys[i].seq, keys[i].key);
}

int term_open(struct ui_theme *theme)
{
	const char *cs;
	bool utf8;

	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
	have_tio = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	screen = newterm(NULL, stdout, stdin);
	if (!screen)
		return -1;
	set_term(screen);
	cbreak();		/* Ctrl-C stays a signal: the same exit path as SIGTERM */
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	leaveok(stdscr, TRUE);
	theme_init(theme, utf8);
	define_keys();
	mouseinterval(0);
#ifdef BUTTON5_PRESSED
	mouse_on = mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED, NULL) != 0;
#else
	mouse_on = mousemask(BUTTON4_PRESSED, NULL) != 0;
#endif
	/* What endwin would send, for the crash path. */
	crash_len = 0;
	if (mouse_on) {
		static const char off[] = "\033[?1000l\033[?1002l\033[?1006l";

		memcpy(crash_seq, off, sizeof(off) - 1);
		crash_len = sizeof(off) - 1;
	}
	add_seq("sgr0");
	add_seq("cnorm");
	add_seq("rmkx");
	alt_screen = tigetstr("rmcup") && tigetstr("rmcup") != (char *)-1;
	add_seq("rmcup");
	crash_arm();
	erase();
	refresh();
	return 0;
}

void term_close(void)
{
	if (!screen)
		return;
	crash_disarm();
	if (mouse_on)
		mousemask(0, NULL);
	endwin();
	delscreen(screen);
	screen = NULL;
	/* Without an alternate screen (vt100) the last picture stays; the cursor is on its
	 * bottom line (the footer): start the shell's next line below it. */
	if (!alt_screen)
		fputs("\n", stdout);
	fflush(stdout);
}

int term_getch(int timeout_ms)
{
	timeout(timeout_ms);
	return getch();
}
