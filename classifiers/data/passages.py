"""Longer fillers pasted into prompts: code snippets, paragraphs, complaints, arguments, letters.

Each list is split between train and held-out like the vocabularies in `vocab.py`.
"""

from __future__ import annotations

P: dict[str, list[str]] = {
    "snippet": [
        "def add(items=[]):\n    items.append(1)\n    return items",
        "for i in range(len(xs)):\n    if xs[i] == target:\n        del xs[i]",
        "const total = orders.reduce((sum, o) => sum + o.price);",
        "SELECT name, COUNT(*) FROM users GROUP BY email;",
        "func main() {\n    var m map[string]int\n    m[\"a\"] = 1\n}",
        "let v = vec![1, 2, 3];\nlet first = &v[0];\nv.push(4);\nprintln!(\"{}\", first);",
        "public boolean isEqual(String a, String b) { return a == b; }",
        "with open('data.txt') as f:\n    lines = f.readlines\nprint(len(lines))",
        "if (user.age = 18) { allowEntry(); }",
        "while True:\n    line = sock.recv(1024)\n    buf += line",
        "x = [[0] * 3] * 3\nx[0][0] = 1\nprint(x)",
        "async function load() { const r = fetch(url); return r.json(); }",
        "int* p = malloc(10);\nfree(p);\nprintf(\"%d\", *p);",
        "items.forEach(async (i) => { await save(i); });\nconsole.log('done');",
        "df[df.price > 10]['discount'] = 0.1",
        "class Counter:\n    count = []\n    def add(self, x):\n        self.count.append(x)",
        "for (var i = 0; i < 3; i++) { setTimeout(() => console.log(i), 100); }",
        "result = sum([x * x for x in range(1000000)])",
        "try:\n    risky()\nexcept:\n    pass",
        "SELECT * FROM orders WHERE created_at > '2024-01-01' ORDER BY id LIMIT 10 OFFSET 100000;",
        "puts [1, 2, 3].map { |x| x * 2 }.inject(:+)",
        "echo $PATH | tr ':' '\\n' | grep -c bin",
    ],
    "paragraph": [
        "Our city council voted last night to convert three downtown parking garages into mixed-use housing. "
        "Supporters argue that the garages sit half-empty since the pandemic and that the city urgently needs "
        "affordable units. Business owners worry that customers will stop coming if parking gets harder, and "
        "several asked for a study of foot traffic before construction begins in the spring.",
        "The quarterly results show revenue up 12% year over year, driven mostly by the enterprise segment, "
        "while consumer subscriptions fell for the second quarter in a row. Gross margin improved thanks to "
        "lower hosting costs, but marketing spend rose sharply and the company now expects to break even a "
        "year later than planned.",
        "Researchers tracked 2,400 adults over ten years and found that those who walked at least 7,000 steps "
        "a day had a noticeably lower risk of heart disease. The effect levelled off above 10,000 steps. The "
        "authors caution that the study was observational and that people who walk more may differ in other "
        "ways, such as diet and income.",
        "Starting next month, employees may work from home up to three days a week, subject to their "
        "manager's approval. Core collaboration hours will be 10am to 3pm. Teams must agree on at least one "
        "shared office day, and equipment requests should go through the IT portal rather than by email.",
        "The novel follows a family of olive farmers across three generations as drought, war and migration "
        "pull them apart. The middle section, told through letters, is the strongest; critics have been "
        "divided about the ending, which some find hopeful and others find abrupt and unearned.",
        "The migration to the new billing system was delayed twice because historical invoices contained "
        "inconsistent tax codes. The vendor has proposed a phased cutover region by region, but finance wants "
        "a single switch at the end of the fiscal year to avoid running two systems in parallel.",
        "Coral reefs cover less than one percent of the ocean floor but support roughly a quarter of marine "
        "species. Rising sea temperatures cause corals to expel the algae that feed them, a process called "
        "bleaching. Reefs can recover if the heat stress is short, but repeated events leave too little time.",
        "Our volunteer program grew from 40 to 160 people this year, but retention is poor: most volunteers "
        "come once or twice and never return. Exit surveys mention unclear instructions on the first day, "
        "long waits for tasks, and feeling that nobody noticed their contribution.",
    ],
    "complaint": [
        "I ordered a sofa six weeks ago, was told it would arrive in two, and nobody has answered my emails. "
        "I took a day off work for a delivery that never came. I want a refund and compensation.",
        "Your app charged me twice for the annual plan and the support chat keeps closing my ticket without "
        "a reply. This is the third time I'm writing.",
        "The hotel room smelled of smoke, the air conditioning was broken and the front desk told us nothing "
        "could be done until Monday. We paid for a non-smoking room.",
        "My order arrived with two broken plates and the replacement you sent was the wrong pattern. "
        "I've now spent more time on this than the set was worth.",
        "The technician arrived four hours late, left mud all over the carpet and the boiler still doesn't "
        "work. I expect the call-out fee to be waived.",
    ],
    "argument": [
        "Video games cause violence. My cousin plays shooters every day and he got into a fight at school. "
        "Also, violent crime went up in the nineties when games became popular. So games should be banned for kids.",
        "We should stop funding space exploration because there are problems on Earth. Every dollar spent "
        "on rockets is a dollar not spent on hunger, and besides, we have never found anything useful up there.",
        "Our product is the best on the market because we have the most downloads. Popular things are "
        "popular for a reason, and our competitors' customers complain online all the time.",
        "Remote workers are less productive. Our office was busier before the pandemic, and my friend's "
        "company went back to the office and their profits went up.",
        "Organic food is healthier because it is natural. Chemicals are bad, and people have eaten natural "
        "food for thousands of years without problems.",
    ],
    "letter": [
        "Dear Mr. Alvarez, thank you for meeting with us last week. We were impressed by your team's proposal "
        "and would like to discuss a pilot in two of our stores. Could you share pricing for a six-month "
        "term and the support you would provide during setup?",
        "Hello team, as discussed, we are postponing the product launch to March. The delay gives us time "
        "to finish the accessibility audit and fix the payment issues found in testing. Please update your "
        "timelines and let me know of any risks by Friday.",
        "Dear landlord, I am writing about the heating, which has not worked properly since November. "
        "I have reported it three times. Under the lease, repairs should be made within a reasonable time, "
        "and I would like a date for the repair in writing.",
        "Dear hiring committee, I am applying for the research assistant position. During my master's I "
        "ran field surveys in four districts and cleaned and analysed the data myself. I would welcome the "
        "chance to bring this experience to your project.",
    ],
    "background": [
        "five years in retail management, a part-time bootcamp in data analysis, and a portfolio of three dashboards",
        "a biology degree, two years as a lab technician, and volunteer work teaching science to kids",
        "ten years as a chef, now finishing an online course in project management",
        "a law degree I never used, eight years in customer success at a SaaS company",
    ],
    "numbers": [
        "12, 15, 11, 19, 15, 22, 14", "3.2, 4.8, 5.1, 2.9, 4.4", "102, 98, 110, 95, 101, 99",
        "7, 7, 8, 10, 3, 7, 9, 12", "45, 52, 38, 61, 49, 55", "0.5, 1.5, 2.5, 3.5, 10",
        "18, 21, 19, 24, 30, 21, 17, 22", "250, 310, 280, 295, 330, 270",
    ],
}
