import { describe, expect, it } from 'vitest';
import UAParser from 'ua-parser-js';
import { describeDevice, sessionDevice } from '../../server/accounts/session.js';

const AGENTS = {
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0': 'Firefox 128 on Linux',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91': 'Edge 120 on Windows 10',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1': 'Mobile Safari 17 on iOS 17.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36': 'Chrome 120 on Android 14',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15': 'Safari 17 on Mac OS 10.15.7',
  'curl/8.5.0': 'curl/8.5.0',
};

describe('describeDevice (the sessions list\'s device)', () => {
  it('names the browser and the system, as the whole ua-parser-js result did (decision 0346)', () => {
    for (const [agent, expected] of Object.entries(AGENTS)) {
      expect(describeDevice(agent)).toBe(expected);
      const whole = new UAParser(agent).getResult();
      const browser = [whole.browser.name, whole.browser.major].filter(Boolean).join(' ');
      const os = [whole.os.name, whole.os.version].filter(Boolean).join(' ');
      expect(describeDevice(agent)).toBe(browser && os ? `${browser} on ${os}` : browser || os || agent.slice(0, 100));
    }
    expect(describeDevice(undefined)).toBe('Unknown device');
    expect(describeDevice('x'.repeat(300))).toBe('x'.repeat(100));
  });

  it('is named as the session is read: a stored name as it is, else its User-Agent described (decision 0484)', () => {
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
    expect(sessionDevice({ device: '', userAgent: firefox })).toBe('Firefox 128 on Linux');
    expect(sessionDevice({ device: '', userAgent: null })).toBe('Unknown device');
    // A device sign-in's name, and the rows written before 0484, are kept as stored.
    expect(sessionDevice({ device: 'Living-room TV', userAgent: firefox })).toBe('Living-room TV');
    expect(sessionDevice({ device: 'Chrome 120 on Linux', userAgent: firefox })).toBe('Chrome 120 on Linux');
  });
});
