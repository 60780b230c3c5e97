// <<< and >>> that are not launches: operator<< with template arguments, nested templates.
#include <vector>
#include <ostream>

template <typename T> struct Box;
template <typename T> std::ostream& operator<<(std::ostream&, const Box<T>&);

template <typename T>
struct Box {
    friend std::ostream& operator<<<T>(std::ostream&, const Box&);
    friend std::ostream& ::operator<<<>(std::ostream&, const Box&);
};

std::vector<std::vector<std::vector<int>>> cube;
bool b = 1 > 2>>3;
