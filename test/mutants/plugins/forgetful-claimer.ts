/**
 * The catalogue's plugin form of test/library/mutants.ts's forgetfulClaimer
 * (src/harness/explore/plugin.ts): a provider whose every claim creates a fresh volume.
 */
import type { HcsClient } from '../../../src/product/cloud/index.js';
import type { DiskClaimer } from '../../../src/product/provider/index.js';
import { forgetfulClaimer } from '../../library/mutants.js';

export function options(): { diskClaimer: (cloud: HcsClient) => DiskClaimer } {
  return { diskClaimer: forgetfulClaimer };
}
