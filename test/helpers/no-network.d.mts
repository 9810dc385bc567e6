/** The start of the line no-network.mjs writes on stderr for each socket it refuses. */
export declare const MARKER: string;
