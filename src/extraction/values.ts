// Typed value parsers for extraction: numbers, money, dates, times, booleans, e-mail
// addresses and URLs as they are written in documents, each turned into the JSON value a
// schema asks for. Every `find*` returns all matches in a text with their positions (the
// offline extractor scores them by where they are); every `parse*` the first match or null.
// The parsers live in values/, one module per family; this module is the one to import.

export * from './values/booleans.js';
export * from './values/dates.js';
export * from './values/identifiers.js';
export type { Match } from './values/match.js';
export * from './values/numbers.js';
