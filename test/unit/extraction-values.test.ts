// The typed parsers of the extractors: numbers and money in English and European writing,
// dates to ISO 8601, times, booleans, e-mail addresses, URLs, DOIs and phone numbers.
import { describe, expect, it } from 'vitest';
import {
  findDates,
  findDois,
  findEmails,
  findMoney,
  findNumbers,
  findPhones,
  findUrls,
  parseBoolean,
  parseCurrency,
  parseDate,
  parseDateTime,
  parseEmail,
  parseInteger,
  parseMoney,
  parseNumber,
  parseTime,
  parseUrl,
  readDigits,
} from '../../src/extraction/values.js';

describe('numbers', () => {
  it.each([
    ['1,234.50', 1234.5],
    ['1.234,50', 1234.5],
    ['1,234', 1234],
    ['1.234.567', 1234567],
    ['24,21', 24.21],
    ['0,5', 0.5],
    ['.75', 0.75],
    ['3.41', 3.41],
    ["1'000'000", 1000000],
  ])('reads the digits %s as %d', (digits, expected) => {
    expect(readDigits(digits)).toBe(expected);
  });

  it('finds numbers in text with signs, exponents and scale words', () => {
    expect(parseNumber('about 2.5 million people')).toBe(2_500_000);
    expect(parseNumber('revenue of $3bn')).toBe(3e9);
    expect(parseNumber('a change of -12.5 points')).toBe(-12.5);
    expect(parseNumber('a change of −7')).toBe(-7);
    expect(parseNumber('1.2e3 units')).toBe(1200);
    expect(parseNumber('1\u00a0234,5 m²')).toBe(1234.5);
    expect(parseNumber('no number here')).toBeNull();
    // A range and a citation are separate numbers; parentheses are no sign outside money.
    expect(findNumbers('2009; 39 (3): 361-365').map((m) => m.value)).toEqual([2009, 39, 3, 361, 365]);
    // Table cells separated by tabs or spaces are never one grouped number.
    expect(findNumbers('100 200 300\t400').map((m) => m.value)).toEqual([100, 200, 300, 400]);
  });

  it('reads integers only when they are whole', () => {
    expect(parseInteger('Volume 39')).toBe(39);
    expect(parseInteger('1,200 pages')).toBe(1200);
    expect(parseInteger('24.21 years')).toBeNull();
  });
});

describe('money', () => {
  it.each([
    ['$1,234.50', 1234.5],
    ['Total: 1.234,50 €', 1234.5],
    ['€1.234,50', 1234.5],
    ['USD 99', 99],
    ['99 USD', 99],
    ['-$5', -5],
    ['($5.00)', -5],
    ['Refund $ (12.00)', -12],
    ['£0.99', 0.99],
    ['1,5 Mio. EUR', 1_500_000],
    ['$2.5M', 2_500_000],
  ])('parses %s as %d', (text, expected) => {
    expect(parseMoney(text)).toBe(expected);
  });

  it('prefers amounts with a currency over other numbers and reports the currency', () => {
    expect(findMoney('Invoice 2024 for 3 items: $45.00')[0].value).toEqual({ amount: 45, currency: 'USD' });
    expect(parseCurrency('Total 12,00 €')).toBe('EUR');
    expect(parseCurrency('Paid in GBP')).toBe('GBP');
    expect(parseCurrency('¥500')).toBe('JPY');
    expect(parseCurrency('twelve')).toBeNull();
  });
});

describe('dates and times', () => {
  it.each([
    ['Received: February 25, 2009', '2009-02-25'],
    ['Feb. 25 2009', '2009-02-25'],
    ['February 25th, 2009', '2009-02-25'],
    ['25 February 2009', '2009-02-25'],
    ['25th of February, 2009', '2009-02-25'],
    ['25-Feb-2009', '2009-02-25'],
    ['25. Februar 2009', '2009-02-25'],
    ['2009-02-25', '2009-02-25'],
    ['2009/02/25', '2009-02-25'],
    ['25.02.2009', '2009-02-25'],
    ['02/25/2009', '2009-02-25'],
    ['15/02/2019', '2019-02-15'],
    ['03/04/2020', '2020-03-04'],
    ['3/4/20', '2020-03-04'],
    ["Feb 25 '09", '2009-02-25'],
    ['Expires: 18 June 2015', '2015-06-18'],
    ['Founded February 28, 1998; 18 years ago', '1998-02-28'],
    ['on 2019-02-15T10:00:00Z', '2019-02-15'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseDate(text)).toBe(iso);
  });

  it('refuses impossible and partial dates', () => {
    expect(parseDate('February 30, 2009')).toBeNull();
    expect(parseDate('2009-13-01')).toBeNull();
    expect(parseDate('February 2009')).toBeNull();
    expect(parseDate('March 3, 12 people')).toBeNull();
    expect(parseDate('version 0.17.0')).toBeNull();
  });

  it('reads numeric dates day first when asked', () => {
    expect(parseDate('03/04/2020', { dayFirst: true })).toBe('2020-04-03');
  });

  it('finds every date in order', () => {
    expect(findDates('Received: February 25, 2009 Accepted: April 30, 2009').map((m) => m.value)).toEqual(['2009-02-25', '2009-04-30']);
  });

  it('reads times and date-times', () => {
    expect(parseTime('at 3:45 PM')).toBe('15:45:00');
    expect(parseTime('12:30 am')).toBe('00:30:00');
    expect(parseTime('9am')).toBe('09:00:00');
    expect(parseTime('10:00:05')).toBe('10:00:05');
    expect(parseDateTime('2015-07-24T05:36:09+01:00')).toBe('2015-07-24T05:36:09+01:00');
    expect(parseDateTime('February 15, 2019 at 3:45 PM')).toBe('2019-02-15T15:45:00Z');
    expect(parseDateTime('2019-02-15 10:30 UTC')).toBe('2019-02-15T10:30:00Z');
    expect(parseDateTime('15 March 2020')).toBe('2020-03-15T00:00:00Z');
  });
});

describe('booleans', () => {
  it.each([
    ['Yes', true],
    ['no', false],
    ['TRUE', true],
    ['false', false],
    ['Y', true],
    ['N', false],
    ['1', true],
    ['0', false],
    ['✓', true],
    ['✔', true],
    ['☑', true],
    ['☐', false],
    ['[x]', true],
    ['[ ]', false],
    ['Checked', true],
    ['not paid', false],
    ['Yes, in full', true],
  ])('reads %s as %s', (text, value) => {
    expect(parseBoolean(text)).toBe(value);
  });

  it.each(['N/A', 'maybe', '', '-', 'see page 3'])('says nothing for %j', (text) => {
    expect(parseBoolean(text)).toBeNull();
  });
});

describe('e-mail addresses, URLs, DOIs and phone numbers', () => {
  it('finds e-mail addresses and lower-cases their domain', () => {
    expect(findEmails('satoshin@gmx.com; E-mail: medsci@TUBITAK.gov.tr, mailto:a.b+c@d-e.org.').map((m) => m.value)).toEqual([
      'satoshin@gmx.com',
      'medsci@tubitak.gov.tr',
      'a.b+c@d-e.org',
    ]);
    expect(parseEmail('write to jane [at] example [dot] org')).toBe('jane@example.org');
    expect(parseEmail('no address @ here')).toBeNull();
  });

  it('finds URLs, normalised, with or without a scheme', () => {
    expect(parseUrl('www.bitcoin.org')).toBe('https://www.bitcoin.org/');
    expect(parseUrl('See https://example.com/a_(b)).')).toBe('https://example.com/a_(b)');
    expect(parseUrl('(http://example.com/x?y=1),')).toBe('http://example.com/x?y=1');
    expect(parseUrl('mozilla.org/about')).toBeNull();
    expect(parseUrl('mozilla.org/about', { bareDomains: true })).toBe('https://mozilla.org/about');
    expect(parseUrl('mozilla.org/,%20https://www.mozilla.org/tr/', { bareDomains: true })).toBe('https://www.mozilla.org/tr/');
    // The domain of an e-mail address is no website.
    expect(findUrls('jane@example.org', { bareDomains: true })).toEqual([]);
  });

  it('finds DOIs and phone numbers', () => {
    expect(findDois('doi:10.3906/sag-0902-21').map((m) => m.value)).toEqual(['10.3906/sag-0902-21']);
    expect(findDois('https://doi.org/10.1145/1542476.1542528.').map((m) => m.value)).toEqual(['10.1145/1542476.1542528']);
    expect(findPhones('Phone: +1 (555) 010-4477').map((m) => m.value)).toEqual(['+1 (555) 010-4477']);
    expect(findPhones('Call 2019-02-15 or 12')).toEqual([]);
  });
});
