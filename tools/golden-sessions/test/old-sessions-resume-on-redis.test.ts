import { replayCorpus } from './replay-corpus.ts';

// Sessions written by earlier releases on redis load, resume and continue under the current code.
replayCorpus('redis');
