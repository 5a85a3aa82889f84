/**
 * Spec radius.md ("failures are budgeted per client address and per user name as LDAP binds
 * are"), with issue 49's H4 rule: a wrong name and password count against the client's address and
 * against the name (its normal form, whether it exists or not). Past the address's budget nothing
 * is checked (the same reject). Past the name's budget the password is still checked, so a right
 * one passes and nobody can lock a person out; a wrong one is answered after NAME_DELAY_MS.
 *
 * The address is the network gear's (an access point speaks for everyone on it), so its budget is
 * larger than an LDAP client's: FAILURES_PER_ADDRESS a minute.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sha256 } from '../util/crypto.js';
import { WindowCounter } from '../util/window-counter.js';

export const FAILURES_PER_ADDRESS = 300;
export const FAILURES_PER_NAME = 10;
export const NAME_DELAY_MS = 1_000;

export class FailureBudgets {
  private readonly byAddress = new WindowCounter(FAILURES_PER_ADDRESS, 60_000);
  private readonly byName = new WindowCounter(FAILURES_PER_NAME, 5 * 60_000);

  constructor(private readonly delayMs = NAME_DELAY_MS) {}

  addressSpent(address: string, now: number): boolean {
    return this.byAddress.blocked(address, now) !== undefined;
  }

  nameSpent(name: string, now: number): boolean {
    return this.byName.blocked(key(name), now) !== undefined;
  }

  failed(address: string, name: string, now: number): void {
    this.byAddress.hit(address, now);
    this.byName.hit(key(name), now);
  }

  async delay(): Promise<void> {
    await sleep(this.delayMs);
  }
}

const key = (name: string) => sha256(name.trim().toLowerCase());
