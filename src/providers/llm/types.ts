// The language-model provider: an OpenAI-compatible chat client when configured, and none
// otherwise (every feature that can use a model also has an offline behaviour).

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface JsonSchemaFormat {
  /** Name of the schema, as the structured-output API wants it. */
  name: string;
  schema: Record<string, unknown>;
  /**
   * OpenAI's strict mode (the server guarantees the schema). Default: on when the schema
   * allows it (every object closed with all its properties required), off otherwise.
   */
  strict?: boolean;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Ask for a JSON answer that validates against this schema (structured outputs). */
  jsonSchema?: JsonSchemaFormat;
  /** Upper bound on the answer's tokens (capped by the provider's own limit). */
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
  /** Streams the reply: its content reaches the sink piece by piece as the server writes it. */
  stream?: ChatStreamSink;
}

/**
 * Where a streamed reply's content goes. A failed attempt is retried (and output that does
 * not validate asked for again) only while the consumer has passed nothing on: once it has,
 * the failure is the call's.
 */
export interface ChatStreamSink {
  /** The next piece of the content, in order. */
  delta(text: string): void;
  /** Whether the consumer has passed any of it on to its own client. */
  committed(): boolean;
  /** A new attempt starts: the pieces of the failed one are void. */
  restart(): void;
}

export interface ChatResponse {
  content: string;
  /** The parsed JSON when `jsonSchema` was given and the answer validated against it. */
  json?: unknown;
  model: string;
  /** Token counts as the server reported them, when it did. */
  usage?: { promptTokens: number; completionTokens: number };
}

export interface LlmProvider {
  readonly model: string;
  /**
   * Estimated prompt tokens one call may carry (messages included); callers that pack
   * passages into a prompt stay under it. A call over it is refused without a request.
   */
  readonly promptTokenBudget?: number;
  chat(request: ChatRequest): Promise<ChatResponse>;
}

/** A failed call: the server could not be reached, timed out, or kept refusing. */
export class LlmRequestError extends Error {
  readonly status: number | null;

  constructor(message: string, status: number | null = null, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LlmRequestError';
    this.status = status;
  }
}

/** The server answered, but not with usable output (not JSON, not valid against the schema, a refusal, cut short). */
export class LlmOutputError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LlmOutputError';
  }
}

/**
 * A conservative token estimate without a tokenizer: about four characters per token for
 * English, one per character for CJK scripts (where a character is often a token or more).
 */
export function estimateTokens(text: string): number {
  const cjk = text.match(/[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]/gu)?.length ?? 0;
  return Math.ceil((text.length - cjk) / 4) + cjk;
}

/** Estimated prompt tokens of a message list (a few tokens of framing per message). */
export function estimateMessageTokens(messages: ChatMessage[]): number {
  return messages.reduce((sum, m) => sum + 4 + estimateTokens(m.content), 2);
}
