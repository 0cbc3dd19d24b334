import { replayCorpus } from './replay-corpus.ts';

// Sessions written by earlier releases on postgres load, resume and continue under the current code.
replayCorpus('postgres');
