"""Slot vocabularies for the prompt templates in `templates.py`.

Lists of eight or more entries are split between train and held-out by `generate.py`, so a held-out
prompt shares neither its template nor its slot fillers with anything the classifier trained on.
"""

from __future__ import annotations

V: dict[str, list[str]] = {
    # --- simple -----------------------------------------------------------------------------------
    "product": [
        "order", "package", "subscription", "gift card", "account", "invoice", "membership", "warranty",
        "booking", "reservation", "delivery", "parcel", "voucher", "return label", "loyalty card", "plan",
    ],
    "store": [
        "store", "support line", "pharmacy", "pool", "gym", "library", "clinic", "front desk", "bakery",
        "post office", "showroom", "help desk",
    ],
    "day": ["Sunday", "Saturday", "public holidays", "Christmas Eve", "Monday", "New Year's Day", "Good Friday"],
    "city": [
        "Paris", "Tokyo", "Nairobi", "Lima", "Oslo", "Toronto", "Cairo", "Melbourne", "Seoul", "Lisbon",
        "Denver", "Mumbai", "Dublin", "Santiago", "Hanoi", "Vienna", "Marrakesh", "Reykjavik", "Bogota",
        "Krakow",
    ],
    "country": [
        "Canada", "Brazil", "Kenya", "Norway", "Vietnam", "Peru", "Egypt", "Portugal", "New Zealand",
        "Chile", "Poland", "Thailand", "Morocco", "Iceland", "Argentina", "Finland", "Ghana", "Mongolia",
    ],
    "month": ["January", "April", "July", "October", "December", "March", "August"],
    "word": [
        "serendipity", "ubiquitous", "ephemeral", "candid", "meticulous", "pragmatic", "resilient",
        "ambiguous", "nostalgia", "frugal", "eloquent", "tenacious", "benevolent", "mundane", "whimsical",
        "gregarious", "lethargic", "quaint", "verbose", "zealous",
    ],
    "lang_h": ["Spanish", "French", "German", "Italian", "Japanese", "Portuguese", "Dutch", "Korean", "Swedish", "Turkish"],
    "phrase": [
        "thank you", "good morning", "where is the train station", "how much does this cost", "I'm sorry",
        "see you tomorrow", "happy birthday", "excuse me", "I don't understand", "the bill, please",
        "nice to meet you", "good night", "I'm allergic to nuts", "where is the bathroom",
    ],
    "animals": [
        "octopuses", "giraffes", "hummingbirds", "axolotls", "penguins", "koalas", "dolphins", "honeybees",
        "tortoises", "owls", "cheetahs", "jellyfish", "flamingos", "sloths", "wolves",
    ],
    "person": [
        "Marie Curie", "Nelson Mandela", "Ada Lovelace", "Frida Kahlo", "Leonardo da Vinci", "Isaac Newton",
        "Jane Austen", "Mahatma Gandhi", "Nikola Tesla", "Simone de Beauvoir", "Galileo", "Amelia Earhart",
        "Wangari Maathai", "Confucius", "Rosalind Franklin",
    ],
    "book": [
        "Pride and Prejudice", "1984", "Don Quixote", "The Great Gatsby", "One Hundred Years of Solitude",
        "Moby-Dick", "Things Fall Apart", "The Hobbit", "Frankenstein", "War and Peace", "Beloved",
        "The Little Prince",
    ],
    "thing": [
        "photosynthesis", "inflation", "a black hole", "democracy", "an allergy", "a mortgage", "gravity",
        "a vaccine", "a recession", "an eclipse", "a tsunami", "the ozone layer", "a podcast", "jet lag",
        "a sitcom", "a monsoon", "a placebo", "a franchise",
    ],
    "feature": [
        "dark mode", "two-factor authentication", "notifications", "my email address", "my password",
        "my profile picture", "the language", "my shipping address", "my username", "auto-renew",
        "location sharing", "my billing details",
    ],
    "device": ["iPhone", "laptop", "router", "smart TV", "printer", "tablet", "Android phone", "smartwatch", "headphones"],
    "food": [
        "lasagna", "sushi rice", "banana bread", "hummus", "pancakes", "guacamole", "risotto", "a boiled egg",
        "chili", "falafel", "quinoa", "brown rice", "salmon",
    ],
    "adj": ["generous", "ancient", "brave", "noisy", "shallow", "rigid", "humble", "fragile", "optimistic", "scarce"],
    "noun": ["cactus", "mouse", "analysis", "child", "goose", "criterion", "leaf", "phenomenon", "tooth", "person"],
    "event": [
        "the moon landing", "the fall of the Berlin Wall", "the first World Cup", "the French Revolution",
        "the sinking of the Titanic", "the invention of the telephone", "the first Olympic Games",
        "the end of World War II", "the launch of the first iPhone", "the Chernobyl disaster",
    ],
    "landmark": [
        "the Eiffel Tower", "Machu Picchu", "the Great Wall of China", "Mount Kilimanjaro", "the Colosseum",
        "Angkor Wat", "the Statue of Liberty", "Table Mountain", "the Taj Mahal", "Uluru",
    ],
    "payment": ["PayPal", "Apple Pay", "a debit card", "cash on delivery", "a bank transfer", "Klarna", "crypto"],
    "abbr": ["NASA", "UNESCO", "ASAP", "FAQ", "RSVP", "GDP", "DIY", "ETA", "CEO", "VAT", "PIN", "WHO", "NATO"],
    "genre": ["horror", "romantic comedy", "sci-fi", "documentary", "animated", "thriller", "western", "musical"],
    "pet": ["golden retriever", "black cat", "hamster", "parrot", "goldfish", "rabbit", "tortoise", "ferret"],
    "topic_light": ["cats", "coffee", "Mondays", "penguins", "pirates", "the weather", "vegetables", "computers", "dentists"],
    "confusable": [
        "affect or effect", "its or it's", "further or farther", "who or whom", "lay or lie", "fewer or less",
        "then or than", "complement or compliment", "principal or principle", "stationary or stationery",
    ],
    # --- complex ----------------------------------------------------------------------------------
    "launch_product": [
        "a budgeting app for students", "a plant-based protein bar", "our new project management tool",
        "a noise-cancelling headset", "an AI note taker for meetings", "a subscription coffee service",
        "a smart thermostat", "a language-learning podcast", "an electric cargo bike",
        "a B2B invoicing platform", "a meditation app", "a line of recycled sneakers",
        "a telehealth service for pets", "a home battery system", "an online cooking course",
        "a co-working space in a small town", "a kids' coding kit",
    ],
    "audience": [
        "existing customers", "investors", "our engineering team", "first-time buyers",
        "small business owners", "parents of toddlers", "university students", "hospital administrators",
        "retirees", "journalists", "the board of directors", "frontline retail staff", "non-technical managers",
    ],
    "essay_topic": [
        "the impact of remote work on city centres", "whether social media has helped or hurt democracy",
        "the ethics of gene editing in humans", "the role of nuclear power in decarbonisation",
        "why the Roman Republic collapsed", "the causes of the 2008 financial crisis",
        "universal basic income", "the effects of mass tourism on small islands",
        "the future of public libraries", "automation and the labour market",
        "the printing press and its social consequences", "the trade-offs of rent control",
        "the environmental cost of fast fashion", "how streaming changed the film industry",
        "whether humanity should try to settle Mars", "the decline of local newspapers",
    ],
    "doc_type": [
        "a project proposal", "a cover letter", "a grant application", "a press release",
        "a product requirements document", "a quarterly business review", "an incident post-mortem",
        "a wedding toast", "a eulogy", "a resignation letter", "an onboarding guide", "a code of conduct",
        "an investor update", "a conference talk abstract", "a performance review",
    ],
    "doc_context": [
        "a community garden that needs city funding", "my move from teaching into UX design",
        "our team's migration to a new CRM", "my best friend's wedding next month",
        "a nonprofit that repairs bikes for refugees", "a startup that recycles solar panels",
        "a hospital that wants to cut waiting times", "my grandfather, who was a fisherman for fifty years",
        "a bakery chain expanding to a third city", "a research lab studying coral bleaching",
        "a volunteer-run open-source project",
    ],
    "days": ["3", "4", "5", "7", "10", "two", "three", "five"],
    "premise": [
        "a lighthouse keeper who finds a message in a bottle", "a robot that learns to paint",
        "two rival chefs forced to cook together", "a detective who can hear lies",
        "a village where it never stops snowing", "a time traveller stuck in 1923",
        "a child who befriends a dragon", "an astronaut alone on a failing space station",
        "a librarian who discovers a hidden room", "a musician who slowly loses her hearing",
        "a ghost who is afraid of people", "a mapmaker who draws places that don't exist yet",
    ],
    "compare": [
        "renting versus buying a home", "a Roth IRA versus a traditional IRA", "remote versus in-office work",
        "electric cars versus hybrids", "Stoicism versus Epicureanism", "an MBA versus a master's in data science",
        "franchising versus starting an independent business", "the keto diet versus the Mediterranean diet",
        "Kantian ethics versus utilitarianism", "public versus private schools",
        "leasing versus buying a car", "freelancing versus a full-time job",
    ],
    "role": [
        "junior product manager", "nurse", "high school teacher", "warehouse supervisor", "data analyst",
        "sales rep", "UX designer", "junior accountant", "restaurant manager", "HR generalist",
        "civil engineer", "marketing coordinator",
    ],
    "challenge": [
        "cut our team's budget by 20% without layoffs", "present a new strategy to the executives next week",
        "mediate a conflict between two senior colleagues", "take over a project that is three months late",
        "convince a sceptical client to renew", "redesign the onboarding process from scratch",
        "lead a team that used to be my peers", "reduce customer churn in one quarter",
    ],
    "deep_topic": [
        "the theory of evolution", "Keynesian economics", "the causes of the First World War",
        "how the immune system works", "existentialism", "the history of the internet",
        "climate feedback loops", "behavioural economics", "the Cold War", "how central banks set interest rates",
        "the philosophy of mind", "plate tectonics",
    ],
    "training_event": [
        "a first marathon", "a 100 km cycling event", "a powerlifting meet", "a triathlon",
        "a mountain trek at altitude", "a half marathon after a knee injury", "a swimming crossing",
    ],
    "business_move": [
        "expanding into Southeast Asia", "switching to a four-day work week", "acquiring a smaller competitor",
        "moving all infrastructure to a single cloud provider", "launching a subscription tier",
        "outsourcing customer support", "going fully remote", "raising prices by 15%",
    ],
    "research_q": [
        "how screen time affects sleep in teenagers", "whether bike lanes reduce traffic injuries",
        "the effect of minimum wage increases on small restaurants", "loneliness among older adults in cities",
        "why some students drop out of online courses", "the link between green spaces and mental health",
        "misinformation spread in group chats", "the impact of tariffs on local farmers",
    ],
    "stance": [
        "cities should ban cars from their centres", "homework should be abolished in primary schools",
        "voting should be compulsory", "museums should return looted artefacts",
        "the work week should be shortened", "college should be free", "plastic packaging should be taxed",
    ],
    "person_rel": [
        "my elderly father", "my business partner", "a roommate", "my teenage son", "a long-time client",
        "my manager", "my sister", "a team member who keeps missing deadlines",
    ],
    "issue": [
        "moving into assisted living", "splitting the company's profits differently", "unpaid bills",
        "his grades and gaming habits", "a missed delivery deadline", "my wish to work part-time",
        "an inheritance dispute", "repeated lateness",
    ],
    "field": [
        "retail banking", "nursing", "journalism", "mechanical engineering", "hospitality", "law",
        "teaching", "logistics", "graphic design", "the military", "pharmacy",
    ],
    "feature_pm": [
        "offline mode in our mobile app", "a referral programme", "shared family accounts",
        "an in-app chat with support", "usage-based billing", "a dark-pattern-free cancellation flow",
        "a recommendations carousel", "accessibility improvements for screen readers",
    ],
    "occasion": [
        "my parents' 40th anniversary", "a retirement party for a colleague of 30 years",
        "a high school graduation", "opening night of our community theatre", "my brother's wedding",
        "a charity gala for a children's hospital", "the last day of a summer camp",
    ],
    "school_topic": [
        "the water cycle", "fractions", "the causes of the American Revolution", "persuasive writing",
        "ecosystems", "Shakespeare's sonnets", "basic electricity", "climate change",
    ],
    "grade": ["5th grade", "7th grade", "high school", "first-year university", "adult ESL", "9th grade"],
    "company_kind": [
        "a family-owned hardware store", "a fintech startup", "a regional airline", "an indie game studio",
        "a vegan restaurant chain", "a university bookstore", "a ride-sharing company in a mid-sized city",
        "a local newspaper", "a solar installation company",
    ],
    "counterfactual_event": [
        "the Cuban Missile Crisis", "the invention of the printing press", "the 1918 flu pandemic",
        "the Apollo programme", "the collapse of the Soviet Union", "the Spanish conquest of the Aztecs",
        "the Industrial Revolution",
    ],
    "negotiation": [
        "a salary raise after two years without one", "a lease renewal for our shop",
        "buying a used car from a dealer", "a supplier contract with tighter margins",
        "a job offer from a competitor", "splitting chores with my partner",
    ],
    "setting": [
        "a city built on the back of a giant turtle", "an archipelago where magic is rationed",
        "a desert empire after the rivers dried up", "a floating market between two worlds",
        "a mountain monastery that guards forbidden maps",
    ],
    "idea": [
        "a subscription box for houseplants", "an app that matches dog owners for walks",
        "a marketplace for second-hand lab equipment", "a laundromat with a café", "AI tutoring for adults",
        "a rental service for camping gear", "a mobile bike repair van",
    ],
    "ethics_topic": [
        "facial recognition in public spaces", "eating meat", "AI-generated art", "euthanasia",
        "zoos", "designer babies", "surveillance in the workplace",
    ],
    # --- code -------------------------------------------------------------------------------------
    "lang": [
        "Python", "JavaScript", "TypeScript", "Go", "Rust", "Java", "C#", "C++", "Ruby", "PHP", "Kotlin",
        "Swift", "Scala", "Elixir", "Haskell",
    ],
    "task": [
        "reverse a string", "read a CSV file", "sort a list of dictionaries by a key", "make an HTTP GET request",
        "parse JSON", "remove duplicates from a list", "check if a file exists", "get the current timestamp",
        "split a string by commas", "merge two dictionaries", "flatten a nested list",
        "read environment variables", "create a thread pool", "append a line to a file",
        "convert a string to an integer", "iterate over a map", "time how long a function takes",
        "generate a UUID", "deep copy an object", "catch multiple exceptions", "run a shell command",
        "format a date as ISO 8601", "count word frequencies in a text", "connect to a PostgreSQL database",
        "define an enum", "zip two lists together", "pad a number with leading zeros",
        "read a large file line by line", "validate an email address", "retry a failing network call",
    ],
    "concept": [
        "closures", "async/await", "generics", "decorators", "pointers", "the borrow checker",
        "dependency injection", "virtual functions", "monads", "the event loop", "garbage collection",
        "list comprehensions", "interfaces", "higher-order functions", "memoization", "race conditions",
        "tail recursion", "mutexes", "hoisting", "lifetimes", "traits", "coroutines",
    ],
    "error": [
        "TypeError: 'NoneType' object is not subscriptable", "IndexError: list index out of range",
        "segmentation fault (core dumped)", "java.lang.NullPointerException",
        "Uncaught TypeError: Cannot read properties of undefined (reading 'map')",
        "ModuleNotFoundError: No module named 'requests'",
        "error[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable",
        "blocked by CORS policy: No 'Access-Control-Allow-Origin' header is present",
        "fatal: refusing to merge unrelated histories",
        "panic: runtime error: invalid memory address or nil pointer dereference",
        "SyntaxError: unexpected EOF while parsing", "java.lang.OutOfMemoryError: Java heap space",
        "RecursionError: maximum recursion depth exceeded",
        "ERROR 1045 (28000): Access denied for user 'root'@'localhost'", "KeyError: 'id'",
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0",
        "npm ERR! code ERESOLVE unable to resolve dependency tree",
        "ValueError: too many values to unpack (expected 2)",
    ],
    "ds": [
        "a linked list", "a binary search tree", "a hash map", "a priority queue", "a trie", "an LRU cache",
        "a ring buffer", "a graph with adjacency lists", "a stack", "a union-find structure", "a bloom filter",
        "a min-heap",
    ],
    "algo": [
        "Dijkstra's algorithm", "quicksort", "binary search", "merge sort", "breadth-first search",
        "topological sort", "KMP string search", "the 0/1 knapsack DP", "A* search",
        "a token-bucket rate limiter", "depth-first search", "the Levenshtein distance",
    ],
    "tool_task": [
        "undo my last git commit but keep the changes", "squash the last three commits in git",
        "see which process is using port 8080", "remove all stopped Docker containers",
        "rename a git branch locally and on the remote", "find all files larger than 100MB from the terminal",
        "restart a systemd service and follow its logs", "list the pods in a Kubernetes namespace",
        "schedule a cron job every 15 minutes", "revert a merge commit in git",
        "copy a file from a Docker container to my host", "change the default shell to zsh",
        "install a specific version of a package with pip", "check which version of node I have",
    ],
    "sql_task": [
        "returns the top five customers by total order value",
        "finds duplicate email addresses in the users table", "counts orders per month for 2023",
        "deletes rows older than 90 days", "joins orders with customers and shows customers with no orders",
        "computes a running total of sales by date", "returns the second highest salary",
        "pivots monthly revenue into columns",
    ],
    "regex_target": [
        "US phone numbers like (555) 123-4567", "dates in YYYY-MM-DD format", "hex colour codes",
        "IPv4 addresses", "words that start with a capital letter", "URLs starting with https",
        "postcodes in the UK", "strings with at least one digit and one uppercase letter",
    ],
    "framework": [
        "Django", "React", "Flask", "Spring Boot", "Express", "FastAPI", "Vue", "Rails", "Next.js", "Laravel",
        "Angular", "Svelte",
    ],
    "fw_task": [
        "add JWT authentication", "upload files to S3", "paginate a list endpoint", "add a background job",
        "write a middleware that logs request time", "handle form validation errors", "set up database migrations",
        "serve static files in production", "add websocket support", "configure CORS",
    ],
    "pandas_task": [
        "group by two columns and sum another", "drop rows where a column is NaN", "merge two dataframes on a key",
        "convert a column of strings to datetimes", "pivot a long table into a wide one",
        "apply a function to every row", "read only some columns from a huge CSV", "rename columns in bulk",
    ],
    "bash_task": [
        "backs up a directory into a dated tarball", "renames every .jpeg file to .jpg",
        "pings a list of hosts and reports which are down", "deletes log files older than a week",
        "watches a folder and runs tests when a file changes", "counts lines of code per file type",
    ],
    "ci_task": [
        "runs pytest on every pull request", "builds and pushes a Docker image on tags",
        "caches node_modules between runs", "runs a linter and fails on warnings",
        "deploys to staging when main changes",
    ],
    "entity": ["a bank account", "a library book", "an invoice line", "a user profile", "a parking ticket", "a recipe"],
    "api_domain": ["a to-do app", "a library system", "a pet adoption site", "an event ticketing service", "a fitness tracker"],
    "cli_task": [
        "converts Markdown files to HTML", "checks a list of URLs for broken links", "renames photos by their EXIF date",
        "tails a log and highlights errors", "splits a big CSV into chunks",
    ],
    # --- math -------------------------------------------------------------------------------------
    "name": ["Maria", "Ahmed", "Li", "Sam", "Priya", "Jonas", "Fatima", "Diego", "Yuki", "Olu", "Grace", "Tomas"],
    "items": ["apples", "pencils", "tickets", "cupcakes", "marbles", "books", "stickers", "oranges", "cards", "eggs"],
    "fn": [
        "x^3 - 4x", "sin(x)cos(x)", "e^(2x)", "ln(x^2 + 1)", "x e^x", "1/(1 + x^2)", "sqrt(x)", "tan(x)",
        "x^2 ln(x)", "(3x + 1)^5", "cos(3x)", "x/(x + 1)", "arctan(2x)", "e^(-x^2)", "5x^4 - 2x + 7",
    ],
    "claim": [
        "the square root of 2 is irrational", "there are infinitely many primes",
        "the sum of the first n odd numbers is n^2", "the angles of a triangle add up to 180 degrees",
        "n^3 - n is divisible by 6 for every integer n", "every bounded monotone sequence converges",
        "the product of two odd numbers is odd", "log base 2 of 3 is irrational",
    ],
    "shape": ["circle", "square", "equilateral triangle", "regular hexagon", "sphere", "cube", "cylinder"],
}
