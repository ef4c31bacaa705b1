/* A program of C-ABI calls read from bytes: every entry point of
 * include/minimalloc.h, with the values a careless or hostile caller
 * passes (NULL handles and arrays, indices past the end, extremes of
 * int64_t, unknown enum codes), in any order. The library must answer
 * each with a status or a value, never crash, leak or corrupt memory; the
 * few facts every answer must keep are checked here and abort() when
 * broken, so that a fuzzer or a sanitizer reports them.
 *
 * Used by abi_random.c (random programs under ASan and UBSan) and by the
 * coverage-guided fuzz target in fuzz/. */
#include "abi_ops.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "minimalloc.h"

typedef struct {
  const uint8_t *data;
  size_t size, at;
} reader;

static uint8_t byte(reader *r) { return r->at < r->size ? r->data[r->at++] : 0; }

static uint64_t u64(reader *r) {
  uint64_t x = 0;
  int i;
  for (i = 0; i < 8; i++) x = (x << 8) | byte(r);
  return x;
}

/* Mostly small values, sometimes an extreme: where the edges are. */
static int64_t value(reader *r) {
  static const int64_t extremes[] = {0,         1,          -1,        2,
                                     INT64_MAX, INT64_MIN,  INT64_MAX - 1,
                                     (int64_t)1 << 62, -((int64_t)1 << 62), 4096};
  uint8_t k = byte(r);
  if (k < 160) return (int64_t)(k % 40);
  if (k < 220) return (int64_t)(u64(r) % 100000);
  if (k < 240) return extremes[k % (sizeof extremes / sizeof *extremes)];
  return (int64_t)u64(r);
}

static size_t index_of(reader *r, size_t len) {
  uint8_t k = byte(r);
  if (k >= 250) return (size_t)-1 - k % 3; /* far past the end */
  return len ? (size_t)k % (len + 2) : (size_t)k % 3;
}

static int progress_calls;
static minimalloc_abi_counts counts;

minimalloc_abi_counts minimalloc_abi_counted(void) { return counts; }

static int on_progress(void *user, int64_t height, int64_t lower_bound, uint64_t elapsed_us) {
  (void)height;
  (void)lower_bound;
  (void)elapsed_us;
  /* Asks to stop on every third call. */
  return ++*(int *)user % 3 == 0;
}

#define SOLUTIONS 3

/* A string the library returns: NUL-terminated and readable; NULL only
 * where the call's contract says so (a NULL handle). */
static void check_string(const char *s, int may_be_null) {
  if (!s) {
    if (!may_be_null) abort();
    return;
  }
  (void)strlen(s);
}

void minimalloc_abi_drive(const uint8_t *data, size_t size) {
  reader r = {data, size, 0};
  minimalloc_problem *p = NULL;
  minimalloc_options *o = NULL;
  minimalloc_cancel *c = NULL;
  minimalloc_solution *s[SOLUTIONS] = {NULL, NULL, NULL};
  /* The problem's size when each solution was made. */
  size_t made_for[SOLUTIONS] = {0, 0, 0};
  int steps = 0;
  progress_calls = 0;
  /* Most programs start with a problem and options to work on. */
  if (byte(&r) % 8) {
    p = minimalloc_problem_new(1 + (int64_t)(byte(&r) % 64) * 16);
    o = minimalloc_options_new();
  }
  while (r.at < r.size && steps++ < 64) {
    uint8_t op = byte(&r);
    size_t len = minimalloc_problem_len(p);
    counts.calls++;
    counts.buffers += len;
    size_t which = byte(&r) % SOLUTIONS;
    minimalloc_solution **slot = &s[which];
    /* A third of the operations add a buffer: problems grow big enough
     * for the solves to have work. */
    op = op % 38 >= 25 ? 1 : op % 25;
    switch (op) {
      case 0:
        minimalloc_problem_free(p);
        p = minimalloc_problem_new(value(&r));
        break;
      case 1: {
        size_t at = 7;
        int64_t lower, upper, sz, al;
        if (byte(&r) % 4) { /* a plausible buffer */
          lower = byte(&r) % 32;
          upper = lower + 1 + byte(&r) % 16;
          sz = 1 + byte(&r) % 64;
          al = (int64_t)1 << (byte(&r) % 4);
        } else {
          lower = value(&r), upper = value(&r), sz = value(&r), al = value(&r);
        }
        if (minimalloc_problem_add_buffer(p, lower, upper, sz, al, byte(&r) & 1 ? &at : NULL) ==
                MINIMALLOC_STATUS_OK &&
            at != len)
          abort();
        break;
      }
      case 2: {
        int64_t lower[8], upper[8], sz[8], al[8];
        size_t n = byte(&r) % 9, i, first;
        for (i = 0; i < n; i++) {
          lower[i] = value(&r);
          upper[i] = (int64_t)((uint64_t)lower[i] + (uint64_t)value(&r)); /* wraps */
          sz[i] = value(&r);
          al[i] = 1 + byte(&r) % 4;
        }
        if (minimalloc_problem_add_buffers(p, lower, upper, sz, byte(&r) & 1 ? al : NULL, n,
                                           &first) == MINIMALLOC_STATUS_OK &&
            minimalloc_problem_len(p) != len + n)
          abort();
        break;
      }
      case 3:
        minimalloc_problem_add_gap(p, index_of(&r, len), value(&r), value(&r));
        break;
      case 4:
        minimalloc_problem_add_gap_window(p, index_of(&r, len), value(&r), value(&r), value(&r),
                                          value(&r));
        break;
      case 5:
        minimalloc_problem_set_offset(p, index_of(&r, len), value(&r));
        break;
      case 6:
        minimalloc_problem_set_hint(p, index_of(&r, len), value(&r));
        break;
      case 7:
        minimalloc_problem_set_lifetime(p, (minimalloc_lifetime)(int)(byte(&r) % 5) - 1);
        break;
      case 8:
      case 9: {
        size_t members[4], n = byte(&r) % 5, i;
        for (i = 0; i < n; i++) members[i] = index_of(&r, len);
        if (op == 8)
          minimalloc_problem_colocate(p, byte(&r) & 1 ? members : NULL, n);
        else
          minimalloc_problem_separate(p, byte(&r) & 1 ? members : NULL, n);
        break;
      }
      case 10: {
        size_t at;
        minimalloc_problem_add_pool(p, byte(&r) & 1 ? "pool" : NULL, value(&r), value(&r),
                                    value(&r), &at);
        break;
      }
      case 11: {
        size_t pools[3], n = byte(&r) % 4, i;
        for (i = 0; i < n; i++) pools[i] = index_of(&r, 2);
        minimalloc_problem_set_pools(p, index_of(&r, len), byte(&r) & 1 ? pools : NULL, n);
        break;
      }
      case 12:
        minimalloc_options_free(o);
        o = minimalloc_options_new();
        break;
      case 13:
        switch (byte(&r) % 9) {
          case 0: minimalloc_options_set_timeout_ms(o, u64(&r)); break;
          case 1: minimalloc_options_set_node_limit(o, u64(&r)); break;
          case 2: minimalloc_options_set_objective(o, (minimalloc_objective)(int)value(&r)); break;
          case 3: minimalloc_options_set_strategy(o, (minimalloc_strategy)(int)value(&r)); break;
          case 4: minimalloc_options_set_seed(o, u64(&r)); break;
          case 5: minimalloc_options_set_threads(o, byte(&r) % 3); break;
          case 6: minimalloc_options_set_restarts(o, u64(&r)); break;
          case 7: minimalloc_options_set_base(o, value(&r)); break;
          default:
            minimalloc_options_set_progress(o, byte(&r) & 1 ? on_progress : NULL,
                                            &progress_calls);
        }
        break;
      case 14:
        /* The token: made, requested, withdrawn, handed to the options
         * (or NULL), freed while the options still carry it. */
        switch (byte(&r) % 6) {
          case 0:
            minimalloc_cancel_free(c);
            c = minimalloc_cancel_new();
            break;
          case 1: minimalloc_cancel_request(c); break;
          case 2: minimalloc_cancel_reset(c); break;
          case 3:
            if (!c && minimalloc_cancel_requested(c) != 0) abort();
            break;
          case 4: minimalloc_options_set_cancel(o, byte(&r) & 1 ? c : NULL); break;
          default:
            minimalloc_cancel_free(c);
            c = NULL;
        }
        break;
      case 15: {
        /* Solves always end soon: a short timeout and a node limit. */
        minimalloc_solution_free(*slot);
        *slot = NULL;
        counts.solved += minimalloc_solve(p, 1 + byte(&r) % 20, byte(&r) & 1 ? slot : NULL) ==
                         MINIMALLOC_STATUS_OK;
        counts.solves++;
        made_for[which] = len;
        break;
      }
      case 16:
        minimalloc_solution_free(*slot);
        *slot = NULL;
        minimalloc_options_set_timeout_ms(o, 1 + byte(&r) % 20);
        minimalloc_options_set_node_limit(o, 1 + byte(&r) * 1000u);
        counts.solved += minimalloc_solve_with(p, o, byte(&r) & 1 ? slot : NULL) ==
                         MINIMALLOC_STATUS_OK;
        counts.solves++;
        made_for[which] = len;
        break;
      case 17: {
        int64_t offsets[40];
        size_t n = minimalloc_solution_len(*slot), pools[40];
        size_t room = byte(&r) % 41;
        int placed = minimalloc_solution_status(*slot) == MINIMALLOC_STATUS_OK;
        /* Placed: one offset per buffer and a height; else neither. */
        if (*slot && n != (placed ? made_for[which] : 0)) abort();
        minimalloc_solution_offsets(*slot, byte(&r) & 1 ? offsets : NULL, room);
        minimalloc_solution_pools(*slot, byte(&r) & 1 ? pools : NULL, room);
        if (*slot && (minimalloc_solution_height(*slot) < 0) == placed) abort();
        {
          /* What a placement pays is never below its proven least, nor
           * the least below 0. */
          int64_t cost = -1, least = -1;
          minimalloc_status st = minimalloc_solution_penalty(
              *slot, byte(&r) & 1 ? &cost : NULL, &least);
          if (st == MINIMALLOC_STATUS_OK && !(0 <= least && least <= cost)) abort();
        }
        if (!*slot && minimalloc_solution_height(*slot) != -1) abort();
        break;
      }
      case 18: {
        size_t members[8], count;
        int irreducible;
        minimalloc_solution_conflict(*slot, byte(&r) & 1 ? members : NULL, byte(&r) % 9,
                                     byte(&r) & 1 ? &count : NULL, &irreducible);
        break;
      }
      case 19: {
        int64_t height, lower_bound;
        size_t buffers;
        minimalloc_solution_pool_report(*slot, index_of(&r, 2), byte(&r) & 1 ? &height : NULL,
                                        &lower_bound, byte(&r) & 1 ? &buffers : NULL);
        break;
      }
      case 20:
        /* An optimal placement is never below its bound. */
        if (minimalloc_solution_optimal(*slot) &&
            minimalloc_solution_height(*slot) < minimalloc_solution_lower_bound(*slot))
          abort();
        (void)minimalloc_solution_nodes(*slot);
        (void)minimalloc_solution_elapsed_us(*slot);
        (void)minimalloc_solution_stopped(*slot);
        check_string(minimalloc_solution_error(*slot), 0);
        check_string(minimalloc_options_last_error(o), o == NULL);
        break;
      case 21:
        check_string(minimalloc_problem_last_error(p), p == NULL);
        check_string(minimalloc_last_error(), 0);
        check_string(minimalloc_status_str((minimalloc_status)(int)value(&r)), 0);
        check_string(minimalloc_version(), 0);
        break;
      case 23:
        minimalloc_problem_penalize(p, index_of(&r, len), index_of(&r, len),
                                    byte(&r) & 1 ? value(&r) : byte(&r));
        break;
      case 22:
        /* Releasing NULL is a no-op. */
        minimalloc_problem_free(NULL);
        minimalloc_options_free(NULL);
        minimalloc_solution_free(NULL);
        minimalloc_cancel_free(NULL);
        break;
      default:
        minimalloc_solution_free(*slot);
        *slot = NULL;
    }
  }
  minimalloc_problem_free(p);
  minimalloc_options_free(o);
  minimalloc_cancel_free(c);
  {
    int i;
    for (i = 0; i < SOLUTIONS; i++) minimalloc_solution_free(s[i]);
  }
}
