// Booleans as documents write them: yes/no words in a few languages, check marks and boxes.

const TRUE_WORDS = new Set(['yes', 'y', 'true', 't', '1', 'on', 'checked', 'x', '[x]', '(x)', '✓', '✔', '☑', '☒', '✅', 'present', 'included', 'enabled', 'available', 'active', 'done', 'passed', 'pass', 'ok', 'required', 'ja', 'oui', 'sí', 'si']);
const FALSE_WORDS = new Set(['no', 'n', 'false', 'f', '0', 'off', 'unchecked', '[ ]', '( )', '☐', '✗', '✘', '❌', 'none', 'absent', 'excluded', 'disabled', 'unavailable', 'inactive', 'not', 'failed', 'fail', 'nein', 'non', 'never']);

/** "Yes"/"No", "true"/"false", "Y"/"N", "1"/"0", check marks and boxes; null when it says neither. */
export function parseBoolean(text: string): boolean | null {
  const s = text.trim().toLowerCase().replace(/[.!]+$/, '');
  if (s === '' || s === 'n/a' || s === 'na' || s === '-' || s === '?') return null;
  if (TRUE_WORDS.has(s)) return true;
  if (FALSE_WORDS.has(s)) return false;
  const word = s.match(/^[[(]?\s?([\p{L}\p{N}✓✔☑☒✅☐✗✘❌]+)\s?[\])]?/u)?.[1];
  if (word && TRUE_WORDS.has(word)) return true;
  if (word && FALSE_WORDS.has(word)) return false;
  return /^not\b/.test(s) ? false : null;
}
