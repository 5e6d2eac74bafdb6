"""Word lists the near-miss guard (`cache.guard`) uses. Data only; the logic lives in the guard.

Each list is general English (or general for its language), not tuned to particular cached questions:
- FUNCTION words carry no answer-changing content (articles, pronouns, auxiliaries, question words).
- SCAFFOLD words are how people phrase a request ("tell me", "what's the best way to", "steps for");
  adding or dropping them never changes the answer.
- LIGHT words name the kind of answer the question already implies ("which *city* is the capital",
  "which *scientist* discovered"); they may be added or dropped, but are never *swapped* for each other.
- CANONICAL maps spelling variants, abbreviations and true synonyms to one form, so a paraphrase that
  says "km" or "colour" still matches; every entry is a real equivalence (a merge is a possible leak).
- NEGATORS, polarity pairs (POLES) and the number words feed the dedicated checks.
"""

from __future__ import annotations

FUNCTION = frozenset("""
a an the this that these those there here it its it's itself i me my mine myself we us our ours you your
yours yourself he him his she her hers they them their theirs one ones someone somebody anyone anybody
is am are was were be been being do does did doing done have has had having will would shall should can
could may might must ought 'll 're 've 'd 's
what which who whom whose when where why how whether if then than so as such both either each every all
any some many much more most few little lot lots other another same own only just also too very quite
rather really actually exactly still even ever already yet almost about around approximately roughly
of in on at by for with from into onto to toward towards over under up down out off through between
among across after before during since until upon within along via per versus vs vs. v
and or but because while though although however
""".split())
# NB: "not", "no", "without" are negators (checked separately); "up", "down", "over", "under", "before",
# "after", "in", "out", "to", "from" can flip an answer — POLES and the direction check cover the
# cases where they do (raise/lower, before/after as a choice is asked both ways in one sentence).

SCAFFOLD = frozenset("""
please pls plz thanks thank kindly hey hi hello ok okay yo ugh hmm um uh lol btw tbh fyi hiya heya howdy welp
tell telling explain explaining describe describing show showing give giving name list listing
say saying let know knowing want wanting need needing like help helping wonder wondering curious
find finding figure get getting got go going make making made use using used
way ways method methods approach approaches technique steps step process procedure instructions instruction
guide tips tip advice suggestions suggestion recommendation idea ideas options option
best good better right proper correct ideal optimal effective efficient recommended appropriate
typical typically usual usually normal normally general generally common commonly mostly mainly
basically simply simple easy easiest quick quickly fast fastest exact exactly precise precisely
possible possibly able allowed
thing things something anything stuff kind
question answer info information detail details explanation definition meaning mean means
quickest
actually currently today's sometimes
considered deemed regarded standard recommend according
main mainly primarily chiefly properly correctly
expect check see view look lookup find_out
write writing code snippet syntax command commands
happen happens occur occurs
contain contains hold holds equal equals make_up
recipe
convert conversion converting degree calculate calculation compute translate translation
regular full
draft drafting
""".split())
# "fast/quick" are scaffold only as manner ("quick way to"); the superlatives below map speed
# questions to a pole when they are about the subject ("fastest animal") — see FAST_SUBJECT_WORDS.

# The courtesy words among them: the content of "How do you say *thank you* in Japanese?" (`guard`).
COURTESY = frozenset("""please pls plz thanks thank kindly hey hi hello ok okay yo ugh hmm um uh lol btw tbh fyi
hiya heya howdy welp""".split())

# Light words naming a person: a who-question implies one ("Who wrote Harry Potter?" = "Who is the author of …")
PERSON_LIGHT = frozenset("""
person people man woman human someone individual
scientist inventor composer author writer artist painter poet musician astronaut president leader
""".split())
LIGHT = PERSON_LIGHT | frozenset("""
city town country nation place state region capital_city
team side club company organisation organization
word term phrase expression sentence
number count amount total quantity value figure level rate content
year date time period day
book novel story film movie song poem play
element substance material
animal creature species
thing item object
language
version edition
citizen citizens
series rule rules
package packages subscription subscriptions
""".split())

NEGATORS = frozenset("""
not no never without none nothing nobody nowhere neither nor cannot can't won't don't doesn't didn't
isn't aren't wasn't weren't shouldn't wouldn't couldn't hasn't haven't hadn't mustn't needn't n't
avoid prevent prevents preventing prevented prevention ignore ignoring ignored neglect neglecting
""".split())

# Antonym poles. A word on one pole facing a word on the other pole is a contradiction; a pole word
# facing nothing is an ordinary unmatched term. Both words of a pair are canonical (see CANONICAL).
POLES: list[tuple[str, str]] = [
    ("max", "min"), ("long", "short"), ("before", "after"), ("during", "after"), ("during", "before"),
    ("start", "end"), ("first", "last"),
    ("increase", "decrease"), ("raise", "lower"), ("add", "remove"), ("make", "delete"),
    ("enable", "disable"), ("open", "close"), ("buy", "sell"), ("import", "export"),
    ("upload", "download"), ("push", "pull"), ("encrypt", "decrypt"), ("encode", "decode"), ("show", "hide"),
    ("before", "after"),
    ("win", "lose"), ("gain", "lose"), ("hot", "cold"), ("north", "south"), ("east", "west"),
    ("above", "below"), ("inside", "outside"), ("past", "future"),
    ("yesterday", "tomorrow"), ("morning", "evening"), ("morning", "night"), ("good", "bad"),
    ("best", "worst"), ("cheap", "expensive"), ("fast", "slow"), ("easy", "hard"), ("soft", "hard"),
    ("heavy", "light"), ("wet", "dry"), ("young", "old"), ("new", "old"), ("early", "late"),
    ("synonym", "antonym"), ("singular", "plural"), ("local", "remote"), ("lock", "unlock"),
    ("connect", "disconnect"), ("install", "uninstall"), ("subscribe", "unsubscribe"),
    ("follow", "unfollow"), ("mute", "unmute"), ("include", "exclude"), ("accept", "reject"),
    ("allow", "deny"), ("true", "false"), ("positive", "negative"), ("plus", "minus"),
    ("multiply", "divide"), ("inhale", "exhale"), ("arrive", "depart"), ("arrive", "leave"), ("import", "export"),
    ("credit", "debit"), ("borrow", "lend"), ("give", "take"), ("send", "receive"),
    ("input", "output"), ("maximum", "minimum"), ("higher", "lower"), ("more", "less"),
    ("larger", "smaller"), ("faster", "slower"), ("cheaper", "dearer"), ("large", "small"),
    ("gain", "loss"), ("profit", "loss"), ("rise", "fall"), ("build", "destroy"), ("built", "fall"),
    ("cause", "effect"), ("primary", "secondary"), ("advantage", "disadvantage"), ("pro", "con"),
    ("strength", "weakness"), ("success", "failure"), ("inner", "outer"), ("upper", "lower"),
    ("male", "female"), ("major", "minor"), ("odd", "even"), ("acid", "base"), ("dominant", "recessive"),
    ("public", "private"),
    ("internal", "external"), ("vertical", "horizontal"), ("sunrise", "sunset"), ("entry", "exit"),
    # function words too (the pole check reads every token): "days since" ≠ "days until", "are all
    # snakes venomous" ≠ "are any"
    ("since", "until"), ("since", "before"), ("after", "until"), ("all", "any"), ("every", "any"),
    # kin: WordNet's verb senses ("to father", "to mother" = beget) make these synonyms
    ("mother", "father"), ("mom", "dad"), ("mum", "dad"), ("son", "daughter"), ("brother", "sister"),
    ("husband", "wife"), ("boy", "girl"), ("king", "queen"), ("aunt", "uncle"), ("niece", "nephew"),
    ("grandmother", "grandfather"), ("grandson", "granddaughter"), ("boyfriend", "girlfriend"),
]

# Attributes whose answer is an amount: "What is the population of Canada?" asks what "How many people
# live in Canada?" asks. They stay terms; they also give the text the question type "quantity".
QUANTITY_NOUNS = frozenset("""
population amount count quantity total number cost price height weight length width depth distance age
speed duration size area volume temperature
""".split())

# Unit abbreviations typed against their number ("240km", "5kg", "24fps"): the number is read as if a
# space stood between. Single letters only in lower case ("5G" is a network, "5g" five grams); no "s"
# ("iPhone 5s", "the 90s"), "h" (a clock's "24h"), "k" (a thousand), "p" ("1080p") or "x" ("2x faster").
GLUED_UNITS = frozenset("""
km cm mm kg mg ml lb lbs oz hr hrs min mins sec secs ms ft yd yds mi mph kph kmh gb mb tb kb ghz mhz hz
kw kwh mah fps cal kcal gal tsp tbsp kbps mbps gbps
""".split())
GLUED_LOWER_UNITS = frozenset("g l m w v".split())

# Nouns naming the person who did something: "saxophone inventor" asks who, as "Who invented the
# saxophone?" does, not "When was the saxophone invented?". They give a text the question type "person".
AGENT_NOUNS = frozenset("""
inventor inventors creator creators founder founders painter composer author authors writer designer
director architect discoverer builder sculptor originator
""".split())

# "What percentage …", "What year …": a "what X" question that still asks for an amount or a date.
MEASURE_WORDS = frozenset("percentage percent proportion fraction share ratio year years month day time age period".split())

# What a question's opening says about the answer it wants (`intents.intent_of`).
HOW_ADJECTIVES = frozenset("many much long far old big tall high deep wide heavy fast hot cold often large".split())
REQUEST_PREFIXES = (("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"), ("tell", "me"),
                    ("show", "me"), ("give", "me"), ("let", "me", "know"), ("help", "me", "understand"),
                    ("i", "want", "to", "know"), ("i", "would", "like", "to", "know"), ("do", "you", "know"),
                    ("please",), ("explain",), ("describe",), ("walk", "me", "through"), ("talk", "me", "through"))
# Verbs after "Can you …" / "Could you …" that ask the assistant to do something ("Can you explain
# recursion?"); any other verb there asks whether something can be done ("Can you freeze milk?", `intents`)
ASKING_VERBS = frozenset("""
tell explain describe define show give list name summarize summarise outline write compose draft pen script
rewrite edit polish proofread correct rephrase paraphrase simplify translate convert calculate compute
estimate work figure solve find check compare contrast rank sort count help suggest recommend advise
provide share send make create generate produce come craft design plan build code debug fix review
analyze analyse evaluate interpret identify break walk teach remind clarify elaborate detail answer
please kindly just briefly quickly plainly simply also really maybe possibly say spell read recite point
look let do draw shorten expand continue finish complete format organize organise improve optimize optimise
refactor extract classify categorize categorise grade critique brainstorm imagine pretend quiz search
""".split())
NORM_WORDS = frozenset("good normal healthy ideal reasonable acceptable".split())  # "What is a good cap rate?"
MANNER_NOUNS = frozenset("way ways method methods steps procedure instructions".split())  # "the way to …"
COMPARISON_WORDS = frozenset("""difference differences differ differs different versus vs compare compared
comparison distinguish distinguishes same""".split())
COMPOSITION_PAIRS = frozenset({("made", "of"), ("made", "from"), ("consist", "of"), ("consists", "of"),
                               ("composed", "of"), ("ingredients", "in"), ("ingredients", "of")})
CHOICE_VERBS = frozenset("use write say choose pick".split())  # "Should I use who or whom?"
IRREGULAR_PARTICIPLES = frozenset("""made done built written grown taken given known drawn shown born kept spent
sold paid set put cut run won chosen spoken eaten found held brought caught taught thought bought told sent
meant""".split())

# Canonical forms: variant → canonical. Applied after lower-casing and light stemming (see guard).
CANONICAL: dict[str, str] = {
    # superlatives and poles
    "largest": "max", "biggest": "max", "greatest": "max", "highest": "max", "tallest": "max",
    "maximum": "max", "most": "max", "top": "max", "max": "max", "heaviest": "max_weight",
    "smallest": "min", "tiniest": "min", "least": "min", "lowest": "min", "minimum": "min", "min": "min",
    "shortest": "short", "longest": "long", "fewest": "min", "afterwards": "after", "afterward": "after",
    "cheapest": "cheap", "priciest": "expensive", "costliest": "expensive",
    "worst": "worst", "slowest": "slow", "hardest": "hard", "easiest": "easy",
    "fastest": "fast", "quickest": "fast", "quicker": "faster", "slower": "slower",
    "smaller": "smaller", "tinier": "smaller", "larger": "larger", "greater": "larger",
    "nearest": "near", "closest": "near", "close": "near", "nearby": "near",
    "farthest": "far", "furthest": "far", "distant": "far",
    "big": "large", "huge": "large", "tiny": "small", "little": "small",
    "bigger": "larger", "cheaper": "cheaper", "pricier": "dearer", "dearer": "dearer",
    # time
    "currently": "now", "current": "now", "nowadays": "now", "present": "now", "today": "now",
    "moment": "now", "latest": "now",
    "autumn": "fall",
    "yr": "year", "yrs": "year", "hr": "hour", "hrs": "hour", "mins": "minute", "sec": "second",
    "secs": "second", "wk": "week", "wks": "week", "mo": "month", "mos": "month",
    # units (a "c"/"f" after a number or in "c to f" is handled by the guard)
    "km": "kilometer", "kms": "kilometer", "kilometre": "kilometer", "kilometer": "kilometer",
    "hz": "hertz", "mi": "mile", "metre": "meter", "m": "meter", "cm": "centimeter", "centimetre": "centimeter",
    "mm": "millimeter", "millimetre": "millimeter", "ft": "foot", "feet": "foot", "yd": "yard",
    "inches": "inch", "lb": "pound", "lbs": "pound", "oz": "ounce", "kg": "kilogram", "kilo": "kilogram",
    "kgs": "kilogram", "g": "gram", "gr": "gram", "mg": "milligram", "l": "liter", "litre": "liter",
    "ml": "milliliter", "millilitre": "milliliter", "gal": "gallon", "tsp": "teaspoon", "tbsp": "tablespoon",
    "tbs": "tablespoon", "tbl": "tablespoon", "kcal": "calorie", "cal": "calorie",
    "°c": "celsius", "°f": "fahrenheit", "centigrade": "celsius", "degc": "celsius", "degf": "fahrenheit",
    "usd": "dollar", "$": "dollar", "eur": "euro", "€": "euro", "gbp": "pound", "£": "pound",
    "sterling": "pound", "jpy": "yen", "¥": "yen", "chf": "franc", "cny": "yuan", "rmb": "yuan",
    "inr": "rupee", "mph": "mile_per_hour", "kph": "kilometer_per_hour", "kmh": "kilometer_per_hour",
    "qt": "quart", "kb": "kilobyte", "mb": "megabyte", "gb": "gigabyte", "tb": "terabyte", "kw": "kilowatt",
    "kwh": "kilowatt_hour", "btc": "bitcoin", "pennies": "penny", "pence": "penny",
    # places and peoples (adjective ↔ place; unambiguous ones only)
    # the country is "united_states", never "us" (a function word: it would vanish from the comparison)
    "usa": "united_states", "america": "united_states", "american": "united_states",
    "americans": "united_states",
    "uk": "uk", "britain": "uk", "british": "uk", "england": "england", "english": "english",
    "nyc": "new_york", "la": "los_angeles",
    "maymonth": "may_month", "infotech": "information_technology", "testament": "testament",
    "australian": "australia", "austrian": "austria", "canadian": "canada", "french": "french",
    "german": "german", "germany": "germany", "japanese": "japanese", "japan": "japan",
    "chinese": "chinese", "china": "china", "italian": "italian", "italy": "italy",
    "spanish": "spanish", "spain": "spain", "mexican": "mexico", "brazilian": "brazil",
    "indian": "india", "russian": "russian", "russia": "russia", "african": "africa", "european": "europe",
    "asian": "asia",
    # peoples whose adjective names no language ("Swiss", not "Dutch" or "Japanese": those stay languages)
    "swiss": "switzerland", "irish": "ireland", "scottish": "scotland", "belgian": "belgium",
    "argentinian": "argentina", "argentine": "argentina", "chilean": "chile", "peruvian": "peru",
    "colombian": "colombia", "egyptian": "egypt", "nigerian": "nigeria", "kenyan": "kenya", "israeli": "israel",
    "iraqi": "iraq", "pakistani": "pakistan", "malaysian": "malaysia", "singaporean": "singapore",
    "cuban": "cuba", "jamaican": "jamaica", "moroccan": "morocco",
    "lunar": "moon", "solar": "sun", "earthly": "earth", "planet's": "planet",
    # everyday synonyms and spellings
    "colour": "color", "colours": "color", "grey": "gray", "tyre": "tire", "mould": "mold",
    "aluminium": "aluminum", "favourite": "favorite", "organise": "organize", "realise": "realize",
    "centre": "center", "theatre": "theater", "programme": "program", "licence": "license",
    "cheque": "check", "defence": "defense", "travelling": "traveling", "cancelled": "canceled",
    "pitch": "field", "football": "soccer", "rug": "carpet", "tap": "faucet", "notebook": "laptop",
    "flat": "flat", "author": "writer", "wrote": "write", "written": "write", "penned": "write",
    "compose": "write", "composes": "write", "composed": "write", "composing": "write",
    "writes": "write", "mobile": "phone", "cellphone": "phone", "smartphone": "phone", "cell": "phone",
    "pc": "computer", "automobile": "car", "vehicle": "car", "auto": "car", "toxic": "poison",
    "turkiye": "turkey", "bunny": "rabbit", "bunnies": "rabbit", "choc": "chocolate", "ketogenic": "keto",
    "sq": "square", "elevation": "altitude", "loss": "lose", "losses": "lose", "baggage": "luggage",
    "unhealthy": "bad",
    # programming shorthand (each only ever means the long form in a question about code)
    "js": "javascript", "ts": "typescript", "py": "python", "k8s": "kubernetes", "db": "database",
    "kubectl": "kubernetes", "postgres": "postgresql", "gsheets": "google_sheets", "golang": "go_language",
    "dupe": "duplicate", "dupes": "duplicate", "pw": "password", "refi": "refinance",
    # a drug's common brand is the drug ("max tylenol per day" = "maximum daily dose of acetaminophen")
    "tylenol": "acetaminophen", "paracetamol": "acetaminophen", "advil": "ibuprofen", "motrin": "ibuprofen",
    "aleve": "naproxen", "benadryl": "diphenhydramine",
    "int": "integer", "ints": "integer", "str": "string", "dict": "dictionary", "dicts": "dictionary",
    "env": "environment", "repo": "repository", "repos": "repository", "config": "configuration",
    "regex": "regex", "regexp": "regex", "regexes": "regex", "dir": "directory", "dirs": "directory",
    "func": "function", "fn": "function", "arg": "argument", "args": "argument", "param": "parameter",
    "params": "parameter", "var": "variable", "vars": "variable", "img": "image", "msg": "message",
    "lib": "library", "libs": "library", "pkg": "package", "docs": "documentation", "avg": "average",
    "fridge": "refrigerator", "tv": "television",
    "carb": "carbohydrate", "carbs": "carbohydrate", "defrost": "thaw", "defrosting": "thaw",
    "uncooked": "raw", "frequency": "often", "frequently": "often",
    "kid": "child", "kids": "child", "children": "child", "toddler": "toddler", "youngster": "child",
    "teen": "teenager", "teens": "teenager", "adolescent": "teenager", "grownup": "adult",
    "grown": "adult", "doggy": "dog", "kitty": "cat",
    "physician": "doctor", "medication": "medicine", "meds": "medicine", "drug": "medicine",
    "pill": "medicine", "tablet": "medicine",
    "purchase": "buy", "acquire": "buy", "obtain": "get",
    "begin": "start", "commence": "start", "beginning": "start", "finish": "end", "conclude": "end",
    "ended": "end", "ending": "end", "terminate": "kill", "stop": "stop",
    "terminal": "terminal", "terminals": "terminal",  # a shell, not a termination
    "construct": "build", "constructed": "build", "built": "build", "erect": "build", "erected": "build",
    "establish": "found", "established": "found", "founded": "found", "found": "found",
    "demolish": "destroy", "torn": "fall", "tear": "fall", "brought": "fall",
    "discover": "discover", "discovered": "discover", "invent": "invent", "invented": "invent",
    "create": "make", "created": "make", "creating": "make", "eliminate": "delete", "erase": "delete",
    "enable": "enable", "activate": "enable", "disable": "disable", "deactivate": "disable",
    "switch": "turn", "toggle": "turn",
    "repair": "fix", "mend": "fix", "broken": "broken", "dead": "dead", "died": "dead",
    "clean": "clean", "cleaning": "clean", "wash": "clean",
    "reduce": "lower", "decrease": "lower", "drop": "lower", "lessen": "lower", "shrink": "lower",
    "compress": "lower", "minimize": "lower", "cut": "lower", "bring": "bring",
    "boost": "raise", "improve": "raise", "increase": "raise", "enhance": "raise", "extend": "raise",
    "enlarge": "raise", "grow": "grow",
    "fast": "fast", "rapid": "fast", "speedy": "fast", "swift": "fast",
    "pace": "speed",  # (velocity is not speed in physics: "How does velocity differ from speed?")
    "peak": "mountain", "peaks": "mountain", "summit": "mountain", "pulse": "heart_rate", "col": "column",
    "costs": "cost", "price": "cost", "fee": "cost", "pay": "cost", "charge": "cost", "expense": "cost",
    "salary": "salary", "wage": "wage", "earn": "salary", "earning": "salary", "income": "income",
    "doctor": "doctor", "safely": "safe", "safe": "safe", "safety": "safe", "risk": "safe",
    "risky": "safe", "danger": "safe", "dangerous": "safe", "harm": "safe", "harmful": "safe",
    "ok": "safe", "okay": "safe", "fine": "safe", "damage": "safe",
    "symptom": "symptom", "sign": "symptom", "signs": "symptom", "indication": "symptom",
    "cause": "cause", "reason": "cause", "why": "why", "caused": "cause", "causes": "cause",
    "happen": "happen", "occur": "happen", "occurs": "happen",
    "meaning": "mean", "definition": "mean", "define": "mean", "translate": "translate",
    "say": "say",
    "location": "where", "located": "where", "situated": "where", "locate": "find",
    "formula": "formula", "equation": "formula", "calculate": "calculate", "compute": "calculate",
    # words the stemmer would fold into another: a calculator is not a calculation ("gre calculator allowed?"
    # is not "How long is the GRE?"), the converse of a theorem is no conversion, itemizing is no item
    "calculator": "calculator", "calculators": "calculator", "converse": "converse",
    "itemize": "itemize", "itemizing": "itemize", "itemized": "itemize", "itemise": "itemize", "itemising": "itemize",
    "itemised": "itemize", "tvs": "television", "forgot": "forget", "forgotten": "forget",
    "went": "go", "gone": "go", "goes": "go",  # "The Titanic went down in what year?" = "… did the Titanic go down?"
    "regularly": "often",  # "how regularly" asks how often (the adjective "regular" is phrasing)
    "computed": "calculate", "work": "work", "worked": "calculate",
    "people": "person", "persons": "person", "population": "population", "populace": "population",
    "live": "live", "living": "live", "reside": "live",
    "difference": "differ", "different": "differ", "differ": "differ", "distinguish": "differ",
    "distinguishes": "differ", "separates": "differ", "vs": "differ", "versus": "differ", "compare": "differ",
    "recommend": "recommend", "suggest": "recommend",
    "learn": "learn", "learning": "learn", "study": "learn", "teach": "learn", "teaches": "learn",
    "beginner": "beginner", "novice": "beginner", "newbie": "beginner", "starter": "beginner",
    "tea": "tea", "brew": "make", "prepare": "make", "cook": "cook", "cooking": "cook",
    "recipe": "recipe", "homemade": "scratch", "scratch": "scratch",
    "stovetop": "stove", "saucepan": "pot", "pan": "pan", "skillet": "pan",
    "tool": "tool", "command": "command", "syntax": "syntax", "shortcut": "shortcut",
    "sort": "sort", "order": "order", "reverse": "reverse", "reversing": "reverse",
    "length": "length", "size": "size", "long": "long", "lengthy": "long",
    "duration": "long", "far": "far", "distance": "distance",
    "hold": "contain", "contain": "contain", "contains": "contain",
    "plane": "flight", "fly": "flight", "flying": "flight", "flights": "flight", "airplane": "flight",
    "trip": "travel", "travel": "travel", "visit": "travel", "go": "go",
    "season": "season", "month": "month",
    "sleep": "sleep", "sleeping": "sleep", "asleep": "sleep",
    "jog": "run", "jogging": "run", "run": "run", "running": "run",
    "exercise": "exercise", "workout": "exercise",
    "weight": "weight", "lose": "lose", "losing": "lose", "gain": "gain", "gaining": "gain",
    "delete": "delete", "deleting": "delete", "remove": "delete", "removing": "delete", "removal": "delete",
    "uninstall": "uninstall", "install": "install", "installing": "install",
    "add": "add", "adding": "add", "insert": "add", "append": "add",
    "rename": "rename", "change": "change", "modify": "change", "alter": "change", "edit": "change",
    "converter": "converter", "converters": "converter",  # a device: "catalytic converter" ≠ "catalyst"
    "convert": "convert", "conversion": "convert", "turn_into": "convert", "transform": "convert",
    "expressed": "convert", "equal": "equal", "equals": "equal", "equivalent": "equal",
    "substitute": "replace", "replacement": "replace", "instead": "replace", "swap": "replace",
    "swapping": "replace", "replace": "replace", "alternative": "replace",
    "dedupe": "dedupe", "duplicate": "duplicate",
    # "time" is no product (the stemmer made "time", "times" and "productivity" one word with "product")
    "time": "time", "times": "time", "timing": "time", "productivity": "productivity", "productive": "productivity",
    "multiplied": "multiply", "×": "multiply", "product": "multiply",
    "divided": "divide", "quotient": "divide", "sum": "plus", "subtract": "minus", "subtracted": "minus",
    "temp": "temperature", "inhabitants": "population", "inhabitant": "population",
    "residents": "population", "resident": "population",
    "keep": "store", "preserve": "store", "storing": "store", "storage": "store",
    "sorry": "apologize", "apology": "apologize", "apologise": "apologize",
    "inventor": "invent", "discoverer": "discover", "writer": "write", "painter": "paint",
    "composer": "compose", "founder": "found", "creator": "make",
    "daily": "day", "weekly": "week", "monthly": "month", "yearly": "year", "annual": "year",
    "annualized": "annualize", "annualised": "annualize",  # an annualized return is not a year
    "annually": "year", "hourly": "hour",
    "membership": "subscription", "subscribe": "subscription",
    "gross_domestic_product": "gdp",
}

NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "couple": 2, "pair": 2, "twice": 2, "thrice": 3,
}
NUMBER_SCALES: dict[str, int] = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 1_000_000,
                                 "billion": 1_000_000_000, "trillion": 1_000_000_000_000}
ORDINALS: dict[str, int] = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "twentieth": 20, "hundredth": 100,
    "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "6th": 6, "7th": 7, "8th": 8, "9th": 9, "10th": 10,
}
# A number after these names a position, as an ordinal before them does: "season 1" = "the first season".
ORDINAL_NOUNS = frozenset("""
season episode chapter part volume level grade phase stage act scene lesson step gen generation
""".split())
# Roman numerals only where they name a number (World War II, Henry VIII); "i" and "v" are too ambiguous.
ROMAN: dict[str, int] = {"ii": 2, "iii": 3, "iv": 4, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "xi": 11,
                         "xii": 12, "xiii": 13, "xiv": 14, "xv": 15, "xvi": 16}
# Fractions in words, read as their digits are ("two thirds" as 2/3). Only "half" and "quarter" are a
# fraction alone; "third" alone is the ordinal ("the third planet"), "a third of" the fraction.
FRACTION_WORDS: dict[str, int] = {
    word: d for d, names in ((2, "half halves"), (3, "third thirds"), (4, "quarter quarters fourth fourths"),
                             (5, "fifth fifths"), (6, "sixth sixths"), (8, "eighth eighths"), (10, "tenth tenths"))
    for word in names.split()
}
FRACTIONS = frozenset({"half", "quarter"})

# Language fingerprints: frequent function words that are distinctive for each language. A request in
# one language is never answered with an answer cached for another.
LANGUAGE_STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the is are was what how which who why when where do does did of to and in for with "
                    "my your can you i it this that there be have has a an from as or on at by".split()),
    "fr": frozenset("le la les est sont quel quelle quels quelles comment pourquoi des du de un une et "
                    "dans pour avec mon ma mes je tu il elle nous vous ce cette qui que où".split()),
    "de": frozenset("der die das ist sind was wie warum wann wo welche welcher welches ein eine und in "
                    "für mit mein meine ich du es nicht von zu dem den im auf".split()),
    "es": frozenset("el la los las es son qué cuál cuáles cómo por porque cuándo dónde un una y en "
                    "para con mi mis yo tú del al se dice que".split()),
    "it": frozenset("il lo la gli le è sono che cosa come perché quando dove un una e in per con mio "
                    "mia io tu del della di".split()),
    "pt": frozenset("o a os as é são que qual quais como por porque quando onde um uma e em para com "
                    "meu minha eu você do da não".split()),
    "nl": frozenset("de het een is zijn wat hoe waarom wanneer waar welke en in voor met mijn ik jij "
                    "van niet".split()),
}

# Multi-word expressions rewritten to one canonical token before anything else (longest first).
# Units written only as their own word: canonical as themselves, so the guard types them (a conversion's
# direction is read: "How many hectares are in an acre?" is not "How many acres are in a hectare?").
CANONICAL.update({unit: unit for unit in """
acre hectare quart pint stone ton tonne byte kilobyte megabyte gigabyte terabyte kilobit megabit gigabit
joule watt kilowatt horsepower btu radian carat barrel bushel furlong fathom knot decade century millennium
millisecond microsecond nanosecond bitcoin satoshi penny
""".split()})

PHRASES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("united", "states", "of", "america"): ("united_states",), ("united", "states"): ("united_states",),
    ("united", "kingdom"): ("uk",), ("great", "britain"): ("uk",), ("new", "york", "city"): ("new_york",),
    ("new", "york"): ("new_york",), ("new", "york", "state"): ("new_york_state",),
    ("passport", "holder"): ("citizen",), ("passport", "holders"): ("citizen",),
    ("checked", "bag"): ("checked", "luggage"), ("checked", "bags"): ("checked", "luggage"),
    **{(verb, "from"): ("origin",) for verb in ("come", "comes", "came", "originate", "originated")},
    **{(verb, "things", "off"): ("procrastinate",) for verb in ("put", "putting", "puts")},
    **{(noun, "limit"): ("max", noun) for noun in "weight size contribution height length character word upload "
       "file attachment deposit withdrawal".split()},
    ("state", "of", "new", "york"): ("new_york_state",), ("los", "angeles"): ("los_angeles",),
    ("second", "world", "war"): ("world_war", "2"), ("first", "world", "war"): ("world_war", "1"),
    ("world", "war"): ("world_war",), ("wwii",): ("world_war", "2"), ("ww2",): ("world_war", "2"),
    ("wwi",): ("world_war", "1"), ("ww1",): ("world_war", "1"),
    ("turn", "off"): ("disable",), ("switch", "off"): ("disable",), ("shut", "off"): ("disable",),
    ("turn", "on"): ("enable",), ("switch", "on"): ("enable",),
    ("log", "in"): ("login",), ("sign", "in"): ("login",), ("log", "out"): ("logout",),
    ("sign", "out"): ("logout",), ("set", "up"): ("setup",),
    ("get", "rid", "of"): ("delete",), ("take", "off"): ("remove",), ("come", "to", "an", "end"): ("end",),
    ("square", "root"): ("sqrt",), ("cube", "root"): ("cbrt",), ("big", "o"): ("complexity",),
    ("time", "complexity"): ("complexity",), ("running", "time"): ("complexity",),
    ("how", "many"): ("how_many",), ("how", "much"): ("how_many",), ("how", "long"): ("how_many",),
    ("how", "far"): ("how_many", "distance"), ("how", "old"): ("how_many", "age"),
    ("how", "hot"): ("how_many", "temperature"), ("how", "cold"): ("how_many", "temperature"),
    ("how", "tall"): ("how_many", "height"), ("how", "high"): ("how_many", "height"),
    ("how", "deep"): ("how_many", "depth"), ("how", "heavy"): ("how_many", "weight"),
    ("how", "fast"): ("how_many", "speed"), ("how", "often"): ("how_many", "often"),
    ("how", "big"): ("how_many", "size"), ("how", "large"): ("how_many", "size"),
    ("how", "wide"): ("how_many", "width"),
    ("number", "of"): ("how_many",),
    ("what", "year"): ("when",), ("which", "year"): ("when",), ("what", "date"): ("when",),
    ("in", "what", "year"): ("when",), ("in", "which", "year"): ("when",), ("what", "time"): ("when",),
    ("right", "now"): ("now",), ("at", "the", "moment"): ("now",), ("these", "days"): ("now",),
    ("light", "years"): ("light_year",), ("light", "year"): ("light_year",),
    ("light", "seconds"): ("light_second",), ("light", "second"): ("light_second",),
    ("miles", "per", "hour"): ("mile_per_hour",), ("kilometers", "per", "hour"): ("kilometer_per_hour",),
    ("km", "h"): ("kilometer_per_hour",), ("fluid", "ounces"): ("ounce",), ("fluid", "ounce"): ("ounce",),
    ("per", "cent"): ("percent",), ("percent",): ("percent",), ("%",): ("percent",),
    ("stand", "for"): ("acronym",), ("short", "for"): ("acronym",), ("full", "form"): ("acronym",),
    ("full", "name"): ("acronym",), ("abbreviation",): ("acronym",), ("spell", "out"): ("acronym",),
    ("boiling", "point"): ("boil", "temperature"), ("melting", "point"): ("melt", "temperature"),
    ("freezing", "point"): ("freeze", "temperature"),
    ("people", "live", "in"): ("population", "in"), ("people", "living", "in"): ("population", "in"),
    ("people", "live"): ("population",), ("live", "in"): ("population", "in"),
    ("throw", "up"): ("vomit",), ("throwing", "up"): ("vomit",), ("threw", "up"): ("vomit",),
    ("chief", "executive"): ("ceo",), ("chief", "executive", "officer"): ("ceo",),
    ("another", "word", "for"): ("synonym",), ("word", "that", "means"): ("synonym",),
    ("speed", "limit"): ("max", "speed"), ("academy", "awards"): ("oscar",), ("academy", "award"): ("oscar",),
    ("does", "it", "take"): (), ("do", "i", "need"): (), ("find", "out"): ("find_out",),
    # phrasing that adds nothing to what is asked: "is credited with inventing" = "invented", "wish
    # someone good night" = "say good night"
    # costing nothing and keeping something, said with or without a negation
    ("without", "paying"): ("free",), ("no", "cost"): ("free",), ("free", "of", "charge"): ("free",),
    ("without", "losing"): ("keep",),
    # "serves as" is "is": "Which city serves as Portugal's capital?"; "required to" is "have to"
    **{(verb, "as"): () for verb in ("serve", "serves", "served", "serving")},
    ("required", "to"): (),
    # exclusion however it is said: "the closest star besides the Sun" = "… other than the Sun" = "apart from …"
    ("besides",): ("except",), ("other", "than"): ("except",), ("apart", "from"): ("except",),
    ("except", "for"): ("except",), ("excluding",): ("except",),
    # declining said as an answer: "a polite way to say no to a wedding invite" = "politely decline …"
    **{(verb, "no"): ("decline",) for verb in ("say", "says", "saying", "said", "rsvp")},
    ("due", "date"): ("deadline",), ("due", "dates"): ("deadline",),
    # asking to be guided: "Can you walk me through jump-starting a car?" = "How do I jump-start a car?"
    ("walk", "me", "through"): (), ("talk", "me", "through"): (), ("walk", "us", "through"): (),
    ("all", "purpose", "flour"): ("flour",),
    ("plural", "form"): ("plural",), ("singular", "form"): ("singular",),
    # said with or without a negation: "not blank" = "non-empty", "can't remember" = "forgot", "unable to" =
    # "can't", "eggless" = "without eggs", "on an empty stomach" = "without food", "hardly any" = "almost no"
    **{(neg, word): ("nonblank",) for neg in ("not", "non") for word in ("blank", "empty")},
    **{(*neg, verb): ("forget",) for neg in (("can", "not"), ("cannot",), ("do", "not"), ("could", "not"))
       for verb in ("remember", "recall")},
    ("yes", "or", "no"): (),  # "… compost, yes or no?" asks, it does not deny
    ("unable", "to"): ("can", "not"), ("empty", "stomach"): ("without", "food"),
    ("hardly", "any"): ("little",), ("barely", "any"): ("little",), ("almost", "no"): ("little",),
    **{(f"{noun}less",): ("without", noun) for noun in "egg sugar meat bone skin seed".split()},
    # a name's part the other leaves out: "FIFA World Cup" = "World Cup", "legal drinking age" = "drinking age"
    ("fifa", "world", "cup"): ("world", "cup"),
    **{("legal", verb, "age"): (verb, "age") for verb in ("drinking", "driving", "voting", "smoking", "gambling")},
    ("word", "that", "means", "the", "opposite"): ("opposite",),  # not a synonym ("… means" alone is)
    # a file named by its format: "export contacts as CSV" = "… to a CSV file"
    **{(kind, noun): (kind,) for kind in "csv pdf zip xlsx docx png jpg jpeg mp3 mp4 excel word "
       "image audio video".split() for noun in ("file", "files")},
    # a default said or not: "a keyboard shortcut" is a shortcut, "the African continent" Africa
    ("keyboard", "shortcut"): ("shortcut",), ("keyboard", "shortcuts"): ("shortcut",),
    ("which", "year", "saw"): ("when",), ("what", "year", "saw"): ("when",),  # "Which year saw the fall of …?"
    **{(adjective, "continent"): tuple(name.split()) for adjective, name in (
        ("african", "africa"), ("asian", "asia"), ("european", "europe"), ("antarctic", "antarctica"),
        ("australian", "australia"))},
    ("top", "row"): ("first", "row"),  # a sheet's top row is its first ("freeze the top row" = "… first row")
    # who is behind a work made it: "Which writer is behind Pride and Prejudice?" = "Who wrote …?"
    **{(agent, "behind"): (agent,) for agent in "writer author painter composer creator director designer "
       "architect".split()},
    # a size said with its word: "a medium-sized banana" = "a medium banana"
    **{(adjective, noun): (adjective,) for adjective in "small medium large big average normal regular standard".split()
       for noun in ("size", "sized")},
    ("credited", "with"): (), ("credited", "as"): (), ("the", "credit", "for"): (), ("wish", "someone"): ("say",),
    # a time zone is its abbreviation however it is written
    **{tuple(f"{region} {kind} time".split()): (f"{region[0]}{kind[0]}t",)
       for region in ("eastern", "central", "mountain", "pacific") for kind in ("standard", "daylight")},
    ("greenwich", "mean", "time"): ("gmt",), ("british", "summer", "time"): ("bst",),
    ("central", "european", "time"): ("cet",), ("japan", "standard", "time"): ("jst",),
    ("wish", "somebody"): ("say",),
    # a compound whose first word the stemmer would make light ("personal" → "person")
    ("personal", "computer"): ("personal_computer",), ("personal", "computers"): ("personal_computer",),
    ("make", "up"): ("make_up",), ("gross", "domestic", "product"): ("gdp",),
    ("*",): ("multiply",),  # "x" is a product only between numbers (`wording.tokenize`): "solve for x"
    ("for", "loop"): ("for_loop",), ("while", "loop"): ("while_loop",), ("do", "while"): ("do_while",),
    ("for", "each"): ("for_each",), ("if", "statement"): ("if_statement",),

    ("regular", "expression"): ("regex",), ("regular", "expressions"): ("regex",),
    # a compound with its own meaning: "the side effects of X" is not "how effective X is"
    ("side", "effects"): ("side_effect",), ("side", "effect"): ("side_effect",),
    ("degrees",): ("degree",), ("sort", "of"): ("kind", "of"),  # "sort" alone is the verb
}

# Superlatives, and the words naming their default scope: "the largest desert" asks for the largest
# desert in the world, so after a superlative these are light words (added freely, never swapped:
# "… in the world" vs "… in Africa" or "… in the country" is still refused).
SUPERLATIVES = frozenset(k for k in CANONICAL if k.endswith("est")) | frozenset(
    "most least best worst top maximum minimum".split())
WORLD_SCOPE = frozenset("world earth planet globe globally worldwide".split())

# The form an answer is asked to take. A request for a form the other text does not even mention wants
# another answer: "Write a poem about the ocean" is not "Explain the ocean", "Give me 3 riddles with
# answers" is not "Give me 3 riddles" (but "ocean poem" is "Write a poem about the ocean"). Patterns are
# token sequences as the guard's tokenizer writes them. Register ("in simple terms", "simply") is not a
# form: people ask "Explain entropy in simple terms" and "What is entropy?" for the same answer.
def _patterns(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(p.split()) for p in text.split(","))


# Works to be written are requested only after a verb that asks to create them ("Write a poem about…",
# "Tell me a joke"); "Who wrote the poem…", "the story of Romeo and Juliet" merely mention one.
CREATED_FORMS = {form: _patterns(patterns) for form, patterns in {
    "poem": "poem,poems,poetry,verse,verses,acrostic",
    "sonnet": "sonnet,sonnets",
    "haiku": "haiku,haikus",
    "limerick": "limerick,limericks",
    "song": "song,songs,lyrics,jingle",
    "story": "story,stories,tale,tales,fable,fables",
    "essay": "essay,essays",
    "email": "email,emails,e mail",
    "joke": "joke,jokes,pun,puns",
    "tweet": "tweet,tweets",
    # asked to make one, not the one the asker is preparing for ("for the office quiz", "on my worksheet")
    "quiz": "quiz,quizzes,flashcard,flashcards,worksheet,worksheets",
    "table": "in a table",  # "give me … in a table", not "count the rows in a table"
}.items()}
CREATE_VERBS = frozenset("write compose draft create generate make give tell craft pen produce come".split())
# Other forms: (patterns that request the form, further words that only mention it).
OUTPUT_FORMS = {form: (_patterns(request), _patterns(mention) if mention else ()) for form, (request, mention) in {
    "summary": ("summarize,summarise,summarizing,summarising,sum up,summary of,synopsis of,recap of,tldr,tl dr",
                "summary,summaries,synopsis,recap"),
    "table": ("as a table,table format,markdown table,tabular form,tabulate", ""),
    "quiz": ("quiz me", ""),
    "bullets": ("bullet point,bullet points,bulleted,bullet list", ""),
    "brief": ("briefly,brief,concise,concisely,succinct,succinctly,in a nutshell,in one sentence,"
              "in a single sentence,one sentence,in one line,one line,in one paragraph,one paragraph,"
              "in a few words", ""),
    "detailed": ("in detail,detailed,in depth,thorough,thoroughly,comprehensive,comprehensively,exhaustive", ""),
    "examples": ("with examples,with an example,with example,with code examples", "example,examples"),
    "answers": ("with answers,with the answers,with solutions,answer key", "answer,answers,solution,solutions"),
}.items()}

# the words a question opens with (a text that opens otherwise and has no "?" reads as a keyword query)
QUESTION_WORDS = frozenset("what which who whom whose when where why how whether".split())
# words a question uses to point back into the sentences of context before it ("My son is 8. Can I give *him*
# aspirin?", "I just watched the first Alien. Who directed *it*?")
BACK_REFERENCES = frozenset("he she him her his hers they them their theirs".split())
POINTING_BACK = BACK_REFERENCES | frozenset("it its this that these those one ones".split())
# fields and tools a question is filed under ("in physics", "recursion meaning programming"), as written
FIELDS = frozenset("""physics chemistry biology astronomy nutrition poetry photography programming coding algorithm
algorithms philosophy economics statistics stats mathematics math maths geometry algebra calculus grammar linguistics
geology networking kubernetes k8s sql postgres postgresql linux unix bash""".split())

# Words that say one thing when each text has the one the other lacks, and nothing else differs: "How do I
# change a flat tire?" = "… replace a flat tyre?", "Does vinegar kill mold?" = "Can vinegar get rid of mold?".
# Only as such a swap (never merged: "replace X with Y" and "kill" keep their own readings elsewhere).
SWAPPED_ALIKE = [tuple(pair.split("~")) for pair in """
change~replace change~update fix~patch safe~bad safe~poison kill~delete clean~delete bake~oven
derivative~differentiate cancel~end stop~disable interval~often shot~vaccine deck~pack drip~leaky
length~size distance~length limit~max error~status job~position solve~x launch~release exercise~training
recover~back age~old f~fahrenheit c~celsius order~sequence order~sort cancel~stop job~role prop~proprietorship
st~stone fraudulent~scam antiderivative~integral dissolve~soluble length~long difference~gap title~win beat~defeat
speed~velocity building~skyscraper enable~turn share~stock directory~folder buck~dollar bucks~dollar
perform~sang perform~singer clone~copy exited~stopped chord~triad computer~laptop proportion~ratio cost~expensive
hurt~lower dump~export certain~specific ask~request save~store bring~carry lube~oil collapse~fall aquarium~tank
put~contribute put~mount worker~employee result~return last~stay claw~scratch record~row
""".split()]

# Terms that start with a phrasing word ("common", "proper", "simple", "right", "general", "normal"…),
# which would otherwise be dropped: "What is a common noun?" and "What is a proper noun?" would both
# read as "noun". Each becomes one token ("common_noun"); a plural is the same token.
SCAFFOLD_COMPOUNDS = """
common noun, proper noun, common cold, common law, common sense, common denominator, common factor,
common multiple, common stock, common ancestor, simple interest, simple machine, simple sugar, simple past,
simple present, simple future, simple carbohydrate, simple harmonic motion, right angle, right triangle,
right wing, right of way, general relativity, general election, general anesthesia, general anaesthetic,
general practitioner, general strike, normal distribution, normal force, proper fraction, good friday,
best man, fast food, fast fashion, main course, use case, milky way, standard deviation, standard error,
standard time, standard model, standard deduction, standard library, standard form, standard input,
standard output, standard of living, standard shipping, standard normal, gold standard,
regular polygon, regular hexagon, regular pentagon, regular octagon, regular season, regular verb,
full moon, full time, full stop, full house, full stack, full text, full screen, golden rule,
golden mean, golden ratio, time series, rule of thumb, rule of law, home rule, slide rule, rule utilitarianism, form factor
"""
# the same words: "heart rate" = "pulse", "rich in" = "high in", "how far away" = "how far"
PHRASES.update({("heart", "rate"): ("heart_rate",), ("rich", "in"): ("high", "in"), ("far", "away"): ("far",),
                ("how", "far", "away"): PHRASES[("how", "far")]})
# "wi-fi" = "wifi"; "the diff between" is the difference; "high definition" (HD) asks for no definition
PHRASES.update({("wi", "fi"): ("wifi",), ("diff", "between"): ("difference", "between"),
                ("high", "definition"): ("hd",), ("standard", "definition"): ("sd",),
                ("first", "aid"): ("first_aid",)})  # care, not an ordinal
# an address named by what it is for is that thing: "my public IP address" = "my public IP", "an email
# address" = "an email"; a Wi-Fi network is the Wi-Fi ("the password on my Wi-Fi network")
PHRASES.update({("ip", "address"): ("ip",), ("ip", "addresses"): ("ip",), ("email", "address"): ("email",),
                ("email", "addresses"): ("email",), ("e", "mail", "address"): ("email",),
                ("e", "mail", "addresses"): ("email",), ("wi", "fi", "network"): ("wifi",),
                ("wifi", "network"): ("wifi",)})
# a maker's name before its product says nothing more ("Microsoft Word" = "Word", "Amazon S3" = "S3"); a diet
# named by its kind is that kind ("the keto diet" = "keto"); a shorthand is what it stands for ("std dev",
# "ELI5", "quick q"); the default is what a thing does "out of the box"; the break-even point is breaking even
PHRASES.update({**{(maker, product): (product,) for maker in ("microsoft", "ms")
                   for product in "word excel powerpoint outlook teams onenote office".split()},
                ("amazon", "s3"): ("s3",), ("aws", "s3"): ("s3",), ("amazon", "web", "services"): ("aws",),
                **{(kind, "diet"): (kind,) for kind in ("keto", "ketogenic", "paleo")},
                ("std", "dev"): ("standard_deviation",), ("stdev",): ("standard_deviation",),
                ("stddev",): ("standard_deviation",), ("eli5",): ("explain",), ("quick", "q"): ("quick", "question"),
                ("out", "of", "the", "box"): ("default",), ("break", "even", "point"): ("break", "even"),
                ("header", "row"): ("first", "row"), ("life", "expectancy"): ("lifespan",),
                ("life", "span"): ("lifespan",), ("perfect", "score"): ("max", "score"),
                ("hydrologic", "cycle"): ("water", "cycle"), ("hydrological", "cycle"): ("water", "cycle")})
# filing taxes is filing a return; Newton's laws are his laws of motion; "in the first place" is an idiom, no
# ordinal; terms of their own that their words would merge into others: t-score, z-score (= a standard score),
# a pointer to a pointer, the rate of doing work (power), the oxidation/atomic/mass number
PHRASES.update({("tax", "return"): ("taxes",), ("tax", "returns"): ("taxes",),
                ("law", "of", "motion"): ("law",), ("laws", "of", "motion"): ("laws",),
                ("in", "the", "first", "place"): (),
                ("t", "score"): ("t_score",), ("z", "score"): ("z_score",), ("standard", "score"): ("z_score",),
                ("pointer", "to", "a", "pointer"): ("double_pointer",), ("rate", "of", "doing", "work"): ("power",),
                **{(kind, "number"): (f"{kind}_number",) for kind in ("oxidation", "atomic", "mass")}})
# grown-ups are adults, "a boy or a girl" is the sex asked ("male or female"), a regex pattern is the regex,
# Google Sheets is gsheets
PHRASES.update({("grown", "ups"): ("adults",), ("grown", "up"): ("adult",),
                ("boy", "or", "girl"): ("male", "or", "female"), ("boy", "or", "a", "girl"): ("male", "or", "female"),
                ("regex", "pattern"): ("regex",),
                ("google", "sheets"): ("google_sheets",), ("google", "sheet"): ("google_sheets",)})
# what a negation says in one word: without shoes is barefoot, without medication (drugs, chemicals) is
# naturally, without a mix is from scratch, what won't stop running keeps running, what isn't running has stopped
_NATURALLY_WITHOUT = ("medication medications medicine medicines meds drug drugs pill pills chemical chemicals "
                      "pesticide pesticides")
PHRASES.update({**{(*lead, "shoes"): ("barefoot",) for lead in (("without",), ("without", "any"), ("with", "no"))},
                **{(*lead, what): ("naturally",) for what in _NATURALLY_WITHOUT.split()
                   for lead in (("without",), ("without", "any"), ("with", "no"), ("no",))},
                ("without", "a", "mix"): ("from", "scratch"), ("without", "a", "box", "mix"): ("from", "scratch"),
                ("not", "stop", "running"): ("keeps", "running"), ("not", "running"): ("stopped",)})
# "how many different kinds" counts kinds (a term: not "How many penguins are there?"), compares nothing
PHRASES.update({("how", "many", "different"): PHRASES[("how", "many")],
                **{("how", "many", *different, kind): (*PHRASES[("how", "many")], "kinds_of")
                   for different in ((), ("different",))
                   for kind in "kind kinds type types sort sorts variety varieties".split()}})
# to take the derivative is the derivative; an Android phone is Android
PHRASES.update({("take", "the", "derivative"): ("derivative",), ("take", "the", "integral"): ("integral",),
                ("android", "phone"): ("android",), ("android", "phones"): ("android",)})
# to take a screenshot is to screenshot
PHRASES.update({(verb, *det, shot): ("screenshot",) for verb in ("take", "taking", "takes", "took")
                for det in ((), ("a",)) for shot in ("screenshot", "screenshots")})
# to compose a work is to write it ("Compose a limerick" = "Write a limerick", "Who composed Hallelujah?" =
# "Who wrote …?"; a composer is not a writer: "ode to joy composer" ≠ "Who wrote the poem Ode to Joy?"); Docker
# Compose is a tool of its own
PHRASES.update({("docker", "compose"): ("docker_compose",)})
# a common compound's formula names it ("moles in 36 g of H2O" = "… of water")
PHRASES.update({(formula,): tuple(name.split()) for formula, name in (
    ("h2o", "water"), ("co2", "carbon dioxide"), ("nacl", "sodium chloride"), ("h2so4", "sulfuric acid"),
    ("hcl", "hydrochloric acid"), ("nh3", "ammonia"), ("ch4", "methane"), ("c6h12o6", "glucose"),
    ("naoh", "sodium hydroxide"), ("caco3", "calcium carbonate"), ("h2o2", "hydrogen peroxide"))})
# a speed in metres per second is one unit however it is written ("m/s" is read as these words)
PHRASES.update({(meter, "per", "second"): ("meter_per_second",) for meter in ("meter", "meters", "metre", "metres")})
# rounding up or down is its own operation (Excel's ROUNDUP, ROUNDDOWN), not rounding
PHRASES.update({(verb, way): ("round" + way,) for verb in ("round", "rounds", "rounding", "rounded")
                for way in ("up", "down")})
# a food rich in a nutrient is high in it ("iron rich foods" = "What foods are high in iron?"), as "rich in" is
_NUTRIENTS = "iron protein calcium fiber fibre potassium magnesium zinc folate antioxidant carb carbohydrate"
PHRASES.update({(nutrient, "rich"): ("high", "in", nutrient) for nutrient in _NUTRIENTS.split()})
# "the diff" is the difference ("whats the diff", not "git diff")
PHRASES.update({("the", "diff"): ("the", "difference")})
# how far in advance is how early ("How far in advance should I book movers?" = "how early to book a moving
# company"); to work out what or how much is to calculate it (not to work out at a gym)
PHRASES.update({("how", "far", "in", "advance"): ("how_many", "earli"), ("how", "far", "ahead"): ("how_many", "earli"),
                ("how", "early"): ("how_many", "earli"),
                **{(verb, "out", what): ("calculate", what) for verb in ("work", "works", "working", "worked")
                   for what in ("how", "what", "the", "my", "your", "a", "an", "which", "whether", "if")}})
PHRASES.update({form: ("_".join(words),)
                for words in (tuple(c.split()) for c in SCAFFOLD_COMPOUNDS.split(","))
                for form in (words, (*words[:-1], words[-1] + "s"))})
