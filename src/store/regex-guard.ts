// The guard in front of PostgreSQL's regex engine for $regex / $iregex filters. The embedded
// engine runs in this process and cannot cancel a statement (PGlite has no statement
// timeout), so a pattern is admitted only when its cost is bounded by its shape: linear in
// the text it reads, with a bounded number of states.
import { errors } from '../errors.js';

export const MAX_PATTERN_LENGTH = 512;
/** States of the automaton PostgreSQL would build, as estimated by `expandedSize`. */
export const MAX_PATTERN_STATES = 1000;

interface Group {
  /** A quantifier or an alternation inside: repeating such a group backtracks badly. */
  risky: boolean;
  /** States of the finished alternatives and of the one being read. */
  done: number;
  current: number;
}

const COUNTED = /^\{(\d{1,6})(,(\d{0,6}))?\}/;

/**
 * Refuses, with a 400 naming `at`: patterns too long or invalid; back-references
 * (exponential); lookahead and lookbehind (each position rescans the rest of the text, so
 * the cost grows with its square: 1.4 s for `(?=a*c)` over 30,000 characters); a repeated
 * group that itself repeats or alternates (`(a+)+`, `(a|aa)*`); and counted repetitions that
 * expand past MAX_PATTERN_STATES (`a{1,255}` five times is 1,275 states). Some harmless
 * patterns such as `(ab|cd)+` are refused too; `[abcd]+` or an unrepeated group is the way round.
 */
export function checkPattern(v: unknown, at: string): void {
  if (typeof v !== 'string') throw errors.invalidFilter(at, 'expects a string');
  if (v.length > MAX_PATTERN_LENGTH) throw errors.invalidFilter(at, `pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  // PostgreSQL's leading embedded options such as `(?i)`; JavaScript knows no such thing.
  // Only options that keep the ARE syntax (not `b`, `e`, `q`) pass.
  const body = v.replace(/^\(\?[cinpstw]+\)/, '');
  try {
    new RegExp(body);
  } catch {
    throw errors.invalidFilter(at, 'invalid regular expression');
  }
  const groups: Group[] = [{ risky: false, done: 0, current: 0 }];
  let last = 0; // states of the atom a quantifier would repeat
  const atom = (states: number) => {
    groups[groups.length - 1].current += states;
    last = states;
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    const top = groups[groups.length - 1];
    if (c === '\\') {
      if (/[1-9]/.test(body[i + 1] ?? '')) throw errors.invalidFilter(at, 'back-references are not allowed');
      i++;
      atom(1);
    } else if (c === '[') {
      i++;
      if (body[i] === '^') i++;
      if (body[i] === ']') i++;
      for (; i < body.length && body[i] !== ']'; i++) if (body[i] === '\\') i++;
      atom(1);
    } else if (c === '(') {
      if (/^\?<?[=!]/.test(body.slice(i + 1))) {
        throw errors.invalidFilter(at, 'lookahead and lookbehind are not allowed (their cost grows with the square of the text)');
      }
      // Skip the `?:` of a non-capturing group: that `?` is no quantifier.
      if (body[i + 1] === '?') i += 2;
      groups.push({ risky: false, done: 0, current: 0 });
    } else if (c === ')') {
      const group = groups.length > 1 ? groups.pop()! : top;
      if (group.risky && /^(?:[*+]|\{\d)/.test(body.slice(i + 1))) {
        throw errors.invalidFilter(at, 'nested quantifiers are not allowed (catastrophic backtracking)');
      }
      groups[groups.length - 1].risky ||= group.risky;
      atom(group.done + group.current);
    } else if (c === '|') {
      top.risky = true;
      top.done += top.current;
      top.current = 0;
      last = 0;
    } else if (c === '{' && COUNTED.test(body.slice(i))) {
      const [text, min, comma, max] = COUNTED.exec(body.slice(i))!;
      // {m} and {m,n} copy the atom up to n times; {m,} copies it m times and loops on one more.
      const copies = Math.max(1, comma === undefined ? +min : max === '' ? +min + 1 : +max);
      top.current += last * (copies - 1);
      last *= copies;
      top.risky = true;
      i += text.length - 1;
    } else if ('*+?'.includes(c)) {
      top.risky = true;
    } else {
      atom(1);
    }
    if (groups.some((g) => g.done + g.current > MAX_PATTERN_STATES)) {
      throw errors.invalidFilter(
        at,
        `pattern is too complex: it expands to more than ${MAX_PATTERN_STATES} states (a counted repetition {m,n} copies what it repeats n times)`,
      );
    }
  }
}
