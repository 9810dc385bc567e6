// A value found in a text with its position (the offline extractor scores values by where
// they are), and the first one's value, which is what every `parse*` answers.

export interface Match<T> {
  value: T;
  start: number;
  end: number;
  raw: string;
}

export function first<T>(matches: Match<T>[]): T | null {
  return matches.length > 0 ? matches[0].value : null;
}
