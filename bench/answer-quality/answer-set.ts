// The labelled question set of the answer benchmark: questions about documents of the test
// corpus, each with an evidence phrase copied from the passage that answers it. The gold
// pages are the pages of that file whose text holds the phrase (found after ingest, so the
// labels do not depend on how a parser paginates). `null` evidence: the corpus does not
// answer the question, and the right answer says so.

export interface LabelledQuestion {
  file: string;
  question: string;
  evidence: string | null;
}

/** Files ingested for the benchmark (paths under corpus/docs). */
export const ANSWER_FILES = [
  'pdf/text/bitcoin.pdf',
  'txt/alice-in-wonderland.txt',
  'markdown/the-art-of-command-line.en.md',
  'pdf/text/tracemonkey.pdf',
  'pdf/text/google-doc-document.pdf',
  'pdf/text/multicolumn.pdf',
  'html/wikipedia.html',
  'html/v8-blog.html',
  'html/google-sre-book-1.html',
];

export const ANSWER_SET: LabelledQuestion[] = [
  { file: 'pdf/text/bitcoin.pdf', question: 'How are new coins introduced into circulation?', evidence: 'the first transaction in a block is a special transaction' },
  { file: 'pdf/text/bitcoin.pdf', question: 'How is the proof-of-work difficulty adjusted over time?', evidence: 'proof-of-work difficulty is determined by a moving average' },
  { file: 'pdf/text/bitcoin.pdf', question: 'How can privacy be maintained when all transactions are announced publicly?', evidence: 'privacy can still be maintained by breaking the flow' },
  { file: 'pdf/text/bitcoin.pdf', question: 'How are transactions hashed so that old blocks can be compacted to save disk space?', evidence: 'transactions are hashed in a Merkle Tree' },
  { file: 'pdf/text/bitcoin.pdf', question: 'What represents the majority decision in the network?', evidence: 'majority decision is represented by the longest chain' },
  { file: 'txt/alice-in-wonderland.txt', question: 'What was written on the small cake Alice found in the glass box?', evidence: "'EAT ME' were beautifully marked in currants" },
  { file: 'txt/alice-in-wonderland.txt', question: 'Who was having tea at the table set out under a tree?', evidence: 'the March Hare and the Hatter were having tea' },
  { file: 'txt/alice-in-wonderland.txt', question: 'Why was Alice tired of sitting by her sister on the bank?', evidence: 'Alice was beginning to get very tired' },
  { file: 'markdown/the-art-of-command-line.en.md', question: 'How do I search through the command history in Bash?', evidence: 'to search through command history' },
  { file: 'markdown/the-art-of-command-line.en.md', question: 'How should a Bash script start so that it aborts on common errors?', evidence: 'set -euo pipefail' },
  { file: 'markdown/the-art-of-command-line.en.md', question: 'Which tools multiplex the screen on remote ssh sessions?', evidence: 'to multiplex the screen' },
  { file: 'markdown/the-art-of-command-line.en.md', question: 'What should I know about passwordless ssh authentication?', evidence: 'basics of passwordless authentication' },
  { file: 'pdf/text/google-doc-document.pdf', question: 'Should errors ever pass silently?', evidence: 'Errors should never pass silently' },
  { file: 'pdf/text/google-doc-document.pdf', question: 'What is better than ugly?', evidence: 'Beautiful is better than ugly' },
  { file: 'html/wikipedia.html', question: "What was Mozilla's total revenue for 2011?", evidence: 'total revenue for 2011 was $163 million' },
  { file: 'html/wikipedia.html', question: 'Which programming language is the Gecko layout engine written in?', evidence: 'Gecko is written in C++' },
  { file: 'html/wikipedia.html', question: 'When will Mozilla Persona shut down?', evidence: 'Persona will be shutting down' },
  { file: 'html/wikipedia.html', question: 'What is the Mozilla Festival?', evidence: 'Mozilla Festival is an annual event' },
  { file: 'html/google-sre-book-1.html', question: 'What are the four golden signals of monitoring?', evidence: 'latency, traffic, errors, and saturation' },
  { file: 'html/google-sre-book-1.html', question: 'Why is designing a monitoring system around the mean latency a danger?', evidence: 'tempting to design a system based upon the mean' },
  { file: 'pdf/text/multicolumn.pdf', question: 'What is the capital of Austria and its official language?', evidence: 'Vienna' },
  { file: 'pdf/text/tracemonkey.pdf', question: 'Which is the only published type-specializing trace compiler for Python?', evidence: 'the only published type-specializing trace compiler' },
  { file: 'html/v8-blog.html', question: 'What has Emscripten been working on for use without JavaScript?', evidence: 'emitting standalone Wasm files' },
  // Paraphrases that share few words with the evidence.
  { file: 'html/wikipedia.html', question: 'Which company did the people who started the Mozilla community come from?', evidence: 'created in 1998 by members of Netscape' },
  { file: 'pdf/text/bitcoin.pdf', question: 'How quickly does the chance of a slower attacker catching up fall?', evidence: 'probability of a slower attacker catching up diminishes exponentially' },
  { file: 'txt/alice-in-wonderland.txt', question: 'What did the label on the little bottle say?', evidence: 'DRINK ME' },
  // Not answered by the corpus.
  { file: '', question: 'What is the boiling point of liquid nitrogen in kelvin?', evidence: null },
  { file: '', question: 'Who won the football World Cup in 1998?', evidence: null },
  { file: '', question: 'How many moons does Neptune have?', evidence: null },
];
